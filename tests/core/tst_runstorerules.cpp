// RunStore::setMoveOnRules: run.json, the log line, the best commit, readers, queued requests and the
// repair of a change interrupted between its log line and run.json.
#include "experimentlog.h"
#include "gitrepo.h"
#include "requestqueue.h"
#include "runconfig.h"
#include "runloader.h"
#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

using namespace ak;
using nlohmann::json;
using ordered = nlohmann::ordered_json;

namespace {

// A run with one kernel, review mode off.
const json kRunJson { { "model", "tiny.py" }, { "settings", { { "review_mode", false } } } };

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

QList<QByteArray> logLines(const QString &dir)
{
    QList<QByteArray> lines = readFile(QDir(dir).filePath(ExperimentLog::fileName())).split('\n');
    lines.removeAll(QByteArray());
    return lines;
}

MoveOnRules rulesOf(const QByteArray &runJson)
{
    RunConfig c;
    if (!RunConfig::parse(runJson, &c) || !c.moveOnWarning.isEmpty())
        qWarning("%s", qPrintable(c.moveOnWarning));
    return c.moveOn;
}

MoveOnRules someRules()
{
    MoveOnRules r;
    r.maxConsecutiveReverts = 8;
    r.roofPct = 75;
    r.hoursPerKernel = 0.5;
    r.speedupOverBaseline = 0; // off
    return r;
}

} // namespace

class RunStoreRulesTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void setRewritesRunJsonLogsAndCommits()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        const QString runJsonPath = tmp.filePath(QStringLiteral("run.json"));
        // A run.json edited by hand: keys out of order, a secret someone pasted in.
        const QByteArray handEdited
            = R"({"zeta": 1, "model": "tiny.py", "agent": {"kind": "llm", "api_key": "sk-SECRET", "max_tokens": 900}, "settings": {"review_mode": false}, "format": 1})";
        QVERIFY(writeFile(runJsonPath, handEdited));

        QString error;
        auto store = RunStore::open(tmp.path(), &error);
        QVERIFY2(store, qPrintable(error));
        const QString bestBefore = store->bestCommit();
        const int linesBefore = int(logLines(tmp.path()).size());
        const MoveOnRules rules = someRules();
        QVERIFY2(store->setMoveOnRules(rules, &error, QStringLiteral("tester")), qPrintable(error));

        // run.json: the rules, the other keys in their order, no secret.
        const QByteArray onDisk = readFile(runJsonPath);
        QCOMPARE(rulesOf(onDisk), rules);
        QVERIFY(!onDisk.contains("SECRET"));
        QVERIFY(onDisk.contains("max_tokens"));
        const ordered o = ordered::parse(onDisk.toStdString());
        QStringList keys;
        for (auto it = o.begin(); it != o.end(); ++it)
            keys << QString::fromStdString(it.key());
        QCOMPARE(keys,
            (QStringList { QStringLiteral("zeta"), QStringLiteral("model"), QStringLiteral("agent"),
                QStringLiteral("settings"), QStringLiteral("format"), QStringLiteral("move_on") }));
        QCOMPARE(store->state().runJson, onDisk);

        // One log line, the commit point, naming who and what it replaced.
        const QList<QByteArray> lines = logLines(tmp.path());
        QCOMPARE(int(lines.size()), linesBefore + 1);
        const json line = json::parse(lines.last().toStdString());
        QCOMPARE(line["type"].get<std::string>(), std::string("run"));
        QCOMPARE(line["action"].get<std::string>(), std::string("move_on"));
        QCOMPARE(line["by"].get<std::string>(), std::string("tester"));
        QCOMPARE(line["value"]["max_consecutive_reverts"].get<int>(), 8);
        QCOMPARE(line["value"]["roof_pct"].get<double>(), 75.0);
        QCOMPARE(line["value"]["speedup_over_baseline"].get<double>(), 0.0);
        QCOMPARE(QString::fromStdString(line["run_json_before"].get<std::string>()),
            GitRepo::blobHash(handEdited));
        QVERIFY(line.contains("time"));

        // The best commit carries the new run.json; its first parent is the previous best.
        GitRepo &repo = store->repo();
        const QString best = store->bestCommit();
        QVERIFY(best != bestBefore);
        QCOMPARE(repo.parentsOf(best).value(0), bestBefore);
        QCOMPARE(repo.readBlob(best, QStringLiteral("run.json")), onDisk);
        QVERIFY2(repo.messageOf(best).startsWith(QLatin1String(
                     "Move-on rules: 8 reverts in a row, 75% of roof, no speedup goal, 0.5 h per kernel")),
            qPrintable(repo.messageOf(best)));
        QCOMPARE(
            repo.readBlob(best, QStringLiteral("kernels/01-matmul/kernel.py")), QByteArray("BASE = 1\n"));

        // The same rules again change nothing.
        QVERIFY(store->setMoveOnRules(rules, &error));
        QCOMPARE(int(logLines(tmp.path()).size()), linesBefore + 1);
        QCOMPARE(store->bestCommit(), best);

        // A reader (the GUI, `status`) sees the rules and the change.
        const RunSnapshotPtr s = RunLoader::load(tmp.path(), &error);
        QVERIFY2(s, qPrintable(error));
        QVERIFY2(s->warnings.isEmpty(), qPrintable(s->warnings.join(QLatin1Char('\n'))));
        QCOMPARE(rulesOf(s->runJson), rules);
        QCOMPARE(s->moveOnChanges.size(), 1);
        QCOMPARE(s->moveOnChanges.first().by, QStringLiteral("tester"));
        QCOMPARE(s->moveOnChanges.first().rules, rules);
        QVERIFY(s->moveOnChanges.first().time.isValid());
        QCOMPARE(s->moveOnChanges.first().line, linesBefore + 1);

        // And so does the next writer, without a repair.
        store.reset();
        store = RunStore::open(tmp.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY2(store->repairNotes().isEmpty(), qPrintable(store->repairNotes().join(QLatin1Char('\n'))));
        QCOMPARE(rulesOf(store->state().runJson), rules);
        QCOMPARE(store->bestCommit(), best);
    }

    void defaultAuthorNamesThisProcess()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        QString error;
        auto store = RunStore::open(tmp.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY(store->setMoveOnRules(someRules(), &error));
        const QString by = store->state().moveOnChanges.constLast().by;
        QCOMPARE(by, RunStore::author());
        QVERIFY2(
            by.contains(QStringLiteral("pid %1").arg(QCoreApplication::applicationPid())), qPrintable(by));
    }

    void badValuesAreRefusedNamingTheField_data()
    {
        QTest::addColumn<int>("reverts");
        QTest::addColumn<double>("roof");
        QTest::addColumn<double>("hours");
        QTest::addColumn<double>("speedup");
        QTest::addColumn<QString>("field");
        QTest::newRow("negative reverts")
            << -1 << 90.0 << 2.0 << 2.0 << QStringLiteral("max_consecutive_reverts");
        QTest::newRow("roof as a fraction") << 5 << 0.9 << 2.0 << 2.0 << QStringLiteral("roof_pct");
        QTest::newRow("roof over 100") << 5 << 120.0 << 2.0 << 2.0 << QStringLiteral("roof_pct");
        QTest::newRow("negative hours") << 5 << 90.0 << -1.0 << 2.0 << QStringLiteral("hours_per_kernel");
        QTest::newRow("speedup below 1")
            << 5 << 90.0 << 2.0 << 0.5 << QStringLiteral("speedup_over_baseline");
    }

    void badValuesAreRefusedNamingTheField()
    {
        QFETCH(int, reverts);
        QFETCH(double, roof);
        QFETCH(double, hours);
        QFETCH(double, speedup);
        QFETCH(QString, field);
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        QString error;
        auto store = RunStore::open(tmp.path(), &error);
        QVERIFY2(store, qPrintable(error));
        const QByteArray runJson = readFile(tmp.filePath(QStringLiteral("run.json")));
        const int lines = int(logLines(tmp.path()).size());
        MoveOnRules r;
        r.maxConsecutiveReverts = reverts;
        r.roofPct = roof;
        r.hoursPerKernel = hours;
        r.speedupOverBaseline = speedup;
        QVERIFY(!store->setMoveOnRules(r, &error));
        QVERIFY2(error.contains(field), qPrintable(error));
        QCOMPARE(readFile(tmp.filePath(QStringLiteral("run.json"))), runJson);
        QCOMPARE(int(logLines(tmp.path()).size()), lines);
        QCOMPARE(store->state().runJson, runJson);
    }

    void queuedRequestIsAppliedByTheWriter()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        QString error;
        auto store = RunStore::open(tmp.path(), &error); // the loop's process
        QVERIFY2(store, qPrintable(error));
        QVERIFY(store->setMoveOnRules(someRules(), &error));

        // Another process (the CLI, the GUI) queues a change of one field.
        QVERIFY(RequestQueue::queue(tmp.path(),
            json { { "action", "move_on" }, { "value", { { "roof_pct", 60 } } }, { "by", "cli user" } },
            &error));
        QCOMPARE(rulesOf(store->state().runJson), someRules()); // not before the boundary
        QStringList errors;
        QCOMPARE(store->applyRequests(&errors), 1);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
        MoveOnRules expected = someRules();
        expected.roofPct = 60; // the other fields stay
        QCOMPARE(rulesOf(store->state().runJson), expected);
        QCOMPARE(rulesOf(readFile(tmp.filePath(QStringLiteral("run.json")))), expected);
        QCOMPARE(store->state().moveOnChanges.constLast().by, QStringLiteral("cli user"));

        // Bad requests are dropped with the field named; nothing changes.
        QVERIFY(RequestQueue::queue(tmp.path(),
            json { { "action", "move_on" }, { "value", { { "speedup_over_baseline", 0.5 } } } }, &error));
        QVERIFY(RequestQueue::queue(
            tmp.path(), json { { "action", "move_on" }, { "value", { { "roof_percent", 80 } } } }, &error));
        QVERIFY(RequestQueue::queue(tmp.path(), json { { "action", "move_on" }, { "value", 5 } }, &error));
        errors.clear();
        QCOMPARE(store->applyRequests(&errors), 0);
        QCOMPARE(errors.size(), 3);
        QVERIFY2(errors[0].contains(QLatin1String("speedup_over_baseline")), qPrintable(errors[0]));
        QVERIFY2(errors[1].contains(QLatin1String("roof_percent")), qPrintable(errors[1]));
        QVERIFY2(errors[2].contains(QLatin1String("value")), qPrintable(errors[2]));
        QCOMPARE(rulesOf(store->state().runJson), expected);
        QCOMPARE(store->state().moveOnChanges.size(), 2);
    }

    void changeInterruptedBeforeRunJsonIsRepaired()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        const QString runJsonPath = tmp.filePath(QStringLiteral("run.json"));
        const QByteArray before = readFile(runJsonPath);
        QString error;
        QString bestBefore;
        {
            auto store = RunStore::open(tmp.path(), &error);
            QVERIFY2(store, qPrintable(error));
            bestBefore = store->bestCommit();
        }
        // What a writer killed right after the commit point leaves: the line, an old run.json and
        // an old best commit.
        LogEntry line;
        line.type = LogEntry::Type::Run;
        line.action = QStringLiteral("move_on");
        line.moveOn = someRules();
        line.by = QStringLiteral("killed writer");
        line.runJsonBefore = GitRepo::blobHash(before);
        QVERIFY(ExperimentLog::append(tmp.filePath(ExperimentLog::fileName()), line, &error));

        // A reader already sees the committed change.
        const RunSnapshotPtr s = RunLoader::load(tmp.path(), &error);
        QVERIFY(s && s->warnings.isEmpty());
        QCOMPARE(rulesOf(s->runJson), someRules());

        // The next writer writes it down: run.json, then the best commit.
        auto store = RunStore::open(tmp.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY2(
            store->repairNotes().join(QLatin1Char('\n')).contains(QLatin1String("run.json: move-on rules")),
            qPrintable(store->repairNotes().join(QLatin1Char('\n'))));
        const QByteArray repaired = readFile(runJsonPath);
        QCOMPARE(rulesOf(repaired), someRules());
        QCOMPARE(repaired, RunConfig::withMoveOn(before, someRules()));
        QCOMPARE(store->state().runJson, repaired);
        QVERIFY(store->bestCommit() != bestBefore);
        QCOMPARE(store->repo().readBlob(store->bestCommit(), QStringLiteral("run.json")), repaired);
        store.reset();
        store = RunStore::open(tmp.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY2(store->repairNotes().isEmpty(), qPrintable(store->repairNotes().join(QLatin1Char('\n'))));
    }

    void laterHandEditOfRunJsonWins()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        QString error;
        {
            auto store = RunStore::open(tmp.path(), &error);
            QVERIFY2(store, qPrintable(error));
            QVERIFY(store->setMoveOnRules(someRules(), &error));
        }
        // Someone edits run.json by hand after the logged change.
        const QString runJsonPath = tmp.filePath(QStringLiteral("run.json"));
        json edited = json::parse(readFile(runJsonPath).toStdString());
        edited["move_on"]["roof_pct"] = 55;
        const QByteArray text = QByteArray::fromStdString(edited.dump(2)) + '\n';
        QVERIFY(writeFile(runJsonPath, text));
        MoveOnRules expected = someRules();
        expected.roofPct = 55;

        const RunSnapshotPtr s = RunLoader::load(tmp.path(), &error);
        QVERIFY(s);
        QCOMPARE(rulesOf(s->runJson), expected);
        auto store = RunStore::open(tmp.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(readFile(runJsonPath), text); // not "repaired" back
        QCOMPARE(rulesOf(store->state().runJson), expected);
        // The next change starts from the edited file.
        MoveOnRules next = expected;
        next.maxConsecutiveReverts = 3;
        QVERIFY(store->setMoveOnRules(next, &error));
        QCOMPARE(rulesOf(readFile(runJsonPath)), next);
    }

    void oldAndOddLogsStillLoad()
    {
        QTemporaryDir tmp;
        QVERIFY(
            test::makeRunDir(tmp.path(), json { { "model", "old" }, { "move_on", { { "roof_pct", 80 } } } }));
        const QString log = tmp.filePath(ExperimentLog::fileName());
        QFile f(log);
        QVERIFY(f.open(QIODevice::Append));
        // A log written before move_on lines existed, a move_on line without run_json_before (applied:
        // the log is the commit point) and a malformed one (reported, skipped).
        f.write(R"({"type":"run","action":"review","value":true,"time":"2024-05-01T12:00:00.000Z"})"
                "\n");
        f.write(
            R"({"type":"run","action":"move_on","value":{"max_consecutive_reverts":9},"time":"2024-05-01T12:00:01.000Z"})"
            "\n");
        f.write(
            R"({"type":"run","action":"move_on","value":{"roof_pct":0.5},"time":"2024-05-01T12:00:02.000Z"})"
            "\n");
        f.close();
        QString error;
        const RunSnapshotPtr s = RunLoader::load(tmp.path(), &error);
        QVERIFY2(s, qPrintable(error));
        QVERIFY(s->reviewMode);
        QCOMPARE(s->warnings.size(), 1);
        QVERIFY2(s->warnings.first().contains(QLatin1String("roof_pct")), qPrintable(s->warnings.first()));
        QCOMPARE(s->moveOnChanges.size(), 1);
        MoveOnRules expected;
        expected.maxConsecutiveReverts = 9; // the line carries whole rules: the others are defaults
        QCOMPARE(rulesOf(s->runJson), expected);
        QCOMPARE(s->experiments.size(), 1);
    }

    // A run's folder without a snapshot (a loop thread): the file read and parsed the same way, and a
    // folder without run.json is an error naming the file, with the defaults left in `out`.
    void runConfigReadFromTheFolder()
    {
        QTemporaryDir tmp;
        QVERIFY(writeFile(
            tmp.filePath(QStringLiteral("run.json")), R"({"dtype": "fp32", "agent": {"kind": "llm"}})"));
        RunConfig c;
        QString why;
        QVERIFY2(RunConfig::read(tmp.path(), &c, &why), qPrintable(why));
        QCOMPARE(c.dtype, QStringLiteral("fp32"));
        QCOMPARE(c.agentJson, QByteArray(R"({"kind":"llm"})"));

        const QString empty = tmp.filePath(QStringLiteral("empty"));
        QVERIFY(QDir().mkpath(empty));
        QVERIFY(!RunConfig::read(empty, &c, &why));
        QVERIFY2(why.contains(QDir(empty).filePath(QStringLiteral("run.json"))), qPrintable(why));
        QVERIFY(c.agentJson.isEmpty() && c.dtype.isEmpty());
        QVERIFY(writeFile(QDir(empty).filePath(QStringLiteral("run.json")), "[1]"));
        QVERIFY(!RunConfig::read(empty, &c, &why));
        QCOMPARE(why, QStringLiteral("run.json: not a JSON object"));
    }

    void runConfigAndSummary()
    {
        RunConfig c;
        QString why;
        QVERIFY(RunConfig::parse(
            R"({"model": "m", "python": "/usr/bin/python3", "activity": "cuda", "dtype": "bf16",
                                     "settings": {"review_mode": true}, "agent": {"kind": "tune"},
                                     "device": {"available": true, "name": "NVIDIA H200", "bandwidth_gbs": 4800}})",
            &c, &why));
        QCOMPARE(c.moveOn, MoveOnRules());
        QVERIFY(c.moveOnWarning.isEmpty());
        QCOMPARE(c.model, QStringLiteral("m"));
        QCOMPARE(c.python, QStringLiteral("/usr/bin/python3"));
        QCOMPARE(c.activity, QStringLiteral("cuda"));
        QCOMPARE(c.dtype, QStringLiteral("bf16"));
        QVERIFY(c.reviewMode);
        QCOMPARE(c.agentJson, QByteArray(R"({"kind":"tune"})"));
        QCOMPARE(c.device.name, QStringLiteral("NVIDIA H200"));
        QCOMPARE(c.device.bandwidthGBs, 4800.0);
        QVERIFY(
            DeviceInfo::fromJson(c.device.toJson()).toJson() == c.device.toJson()); // reads what it writes

        QVERIFY(!RunConfig::parse("not json", &c, &why));
        QCOMPARE(why, QStringLiteral("run.json: not a JSON object"));
        QCOMPARE(c.moveOn, MoveOnRules());
        QVERIFY(RunConfig::parse(R"({"move_on": {"roof_pct": 70}})", &c));
        QCOMPARE(c.moveOn.roofPct, 70.0);
        QCOMPARE(c.moveOn.maxConsecutiveReverts, 5);
        QVERIFY(RunConfig::parse(R"({"move_on": {"hours_per_kernel": "two"}})", &c));
        QCOMPARE(c.moveOn, MoveOnRules()); // the defaults the loop uses then
        QVERIFY2(c.moveOnWarning.startsWith(QLatin1String("run.json: move_on: "))
                && c.moveOnWarning.contains(QLatin1String("hours_per_kernel")),
            qPrintable(c.moveOnWarning));

        QCOMPARE(MoveOnRules().summary(),
            QStringLiteral(
                "5 reverts in a row, 90% of roof, 2x over baseline, 2 h per kernel, 2 misses in the model"));
        MoveOnRules off;
        off.maxConsecutiveReverts = 1;
        off.roofPct = off.hoursPerKernel = off.speedupOverBaseline = 0;
        off.maxInModelMisses = 0;
        QCOMPARE(off.summary(),
            QStringLiteral(
                "1 revert in a row, no roof goal, no speedup goal, no time limit, no in-model rule"));
    }

    void allowReducedPrecisionIsARunSettingBesideTheOthers()
    {
        // `run --allow-reduced-precision` writes it; the loop sends it with every bench (#43 item 5).
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson));
        QString error;
        {
            auto store = RunStore::open(tmp.path(), &error);
            QVERIFY2(store, qPrintable(error));
            QVERIFY(!store->state().config.allowReducedPrecision);
            QVERIFY2(store->setAllowReducedPrecision(true, &error), qPrintable(error));
            QVERIFY(store->state().config.allowReducedPrecision);
        }
        const json onDisk = json::parse(readFile(tmp.filePath(QStringLiteral("run.json"))).toStdString());
        QVERIFY(onDisk["settings"]["allow_reduced_precision"] == true);
        QVERIFY(onDisk["settings"]["review_mode"] == false); // the other settings kept
        auto again = RunStore::open(tmp.path(), &error);
        QVERIFY2(again, qPrintable(error));
        QVERIFY(again->state().config.allowReducedPrecision);
        QVERIFY2(again->setAllowReducedPrecision(false, &error), qPrintable(error));
        RunConfig c;
        QVERIFY(RunConfig::parse(readFile(tmp.filePath(QStringLiteral("run.json"))), &c));
        QVERIFY(!c.allowReducedPrecision);
    }

    void runJsonWithMoveOnKeepsSortedFilesSorted()
    {
        MoveOnRules r = someRules();
        const QByteArray sorted
            = QByteArray::fromStdString(json { { "agent", { { "kind", "tune" } } }, { "model", "m" },
                  { "settings",
                      json::object() } }.dump(2))
            + '\n';
        const QByteArray out = RunConfig::withMoveOn(sorted, r);
        // Inserted where a sorted file has it, so the text equals a fresh sorted dump.
        json j = json::parse(sorted.toStdString());
        j["move_on"] = json::parse(r.toJson().toStdString());
        QCOMPARE(out, QByteArray::fromStdString(j.dump(2)) + '\n');
        QString error;
        QVERIFY(RunConfig::withMoveOn("[1, 2]", r, &error).isEmpty());
        QVERIFY(error.contains(QLatin1String("run.json")));
    }
};

AK_TEST_CLASS(RunStoreRulesTest)
#include "tst_runstorerules.moc"
