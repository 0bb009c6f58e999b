#include "experimentlog.h"
#include "gitrepo.h"
#include "requestqueue.h"
#include "runloader.h"
#include "runlock.h"
#include "runstore.h"
#include "runwatcher.h"
#include "secrets.h"
#include "testregistry.h"

#include <QFile>
#include <QProcess>
#include <QSignalSpy>
#include <QSysInfo>
#include <QTemporaryDir>

using namespace ak;
using nlohmann::json;

namespace {

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void appendRaw(const QString &path, const QByteArray &data)
{
    QFile f(path);
    QVERIFY(f.open(QIODevice::Append));
    f.write(data);
}

KernelRecord kernel(int rank, const QString &name, const QString &op)
{
    KernelRecord k;
    k.rank = rank;
    k.name = name;
    k.opType = op;
    k.share = 0.5 / rank;
    return k;
}

Metrics metrics(double latency, bool correct = true)
{
    Metrics m;
    m.latencyUs = latency;
    m.speedup = 100.0 / latency;
    m.tflops = 1000.0 / latency;
    m.correct = correct;
    return m;
}

// A run with two kernels, "01-matmul" and "02-softmax".
std::unique_ptr<RunStore> makeRun(const QString &dir, const json &settings = json::object())
{
    QString error;
    auto store = RunStore::create(dir, json { { "model", "tiny.py" }, { "settings", settings } }, &error);
    if (!store)
        qWarning("%s", qPrintable(error));
    if (store
        && store->addKernel(
                    kernel(1, QStringLiteral("matmul"), QStringLiteral("matmul")), "BASE_MM = 1\n", &error)
                .id
            == 0)
        qWarning("%s", qPrintable(error));
    if (store
        && store->addKernel(
                    kernel(2, QStringLiteral("softmax"), QStringLiteral("softmax")), "BASE_SM = 1\n", &error)
                .id
            == 0)
        qWarning("%s", qPrintable(error));
    return store;
}

} // namespace

class RunStoreTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void createStripsSecrets()
    {
        QTemporaryDir tmp;
        QString error;
        const json config { { "model", "m.py" },
            { "agent",
                { { "kind", "llm" }, { "api_key", "sk-SECRET1" }, { "max_tokens", 900 },
                    { "auth_token", "SECRET2" } } } };
        auto store = RunStore::create(tmp.path(), config, &error);
        QVERIFY2(store, qPrintable(error));
        const QByteArray runJson = readFile(tmp.filePath(QStringLiteral("run.json")));
        QVERIFY(!runJson.contains("SECRET"));
        QVERIFY(runJson.contains("max_tokens"));
        QCOMPARE(store->strippedKeys(),
            (QStringList { QStringLiteral("agent.api_key"), QStringLiteral("agent.auth_token") }));
        QVERIFY(!RunStore::create(tmp.path(), config, &error));
        QVERIFY2(error.contains(QLatin1String("already")), qPrintable(error));
    }

    void keepAdvancesBranchOthersStayReachable()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path());
        QVERIFY(store);
        QString error;
        const QString baseHead = store->repo().resolveRef(QStringLiteral("refs/heads/kernels/01-matmul"));
        QVERIFY(!baseHead.isEmpty());

        const Experiment kept = store->beginExperiment(QStringLiteral("01-matmul"), "V1 = 2\n",
            QStringLiteral("tune"), QStringLiteral("bigger tiles"), &error);
        QVERIFY2(kept.id > 0, qPrintable(error));
        QCOMPARE(store->state().experiment(kept.id)->status, ExperimentStatus::Running);
        QVERIFY(store->finishExperiment(kept.id, ExperimentStatus::Kept, metrics(50), QString(), &error));
        const Experiment reverted = store->beginExperiment(
            QStringLiteral("01-matmul"), "V2 = 3\n", QStringLiteral("tune"), QStringLiteral("worse"), &error);
        QVERIFY(store->finishExperiment(
            reverted.id, ExperimentStatus::Reverted, metrics(80), QStringLiteral("slower"), &error));
        const Experiment failed = store->beginExperiment(
            QStringLiteral("01-matmul"), "V3 = 4\n", QStringLiteral("tune"), QStringLiteral("wrong"), &error);
        QVERIFY(store->finishExperiment(
            failed.id, ExperimentStatus::Failed, metrics(10, false), QStringLiteral("mismatch"), &error));

        GitRepo &repo = store->repo();
        const QString head = repo.resolveRef(QStringLiteral("refs/heads/kernels/01-matmul"));
        QCOMPARE(head, store->state().experiment(kept.id)->commit);
        QCOMPARE(repo.parentsOf(head), QStringList { baseHead });
        QCOMPARE(repo.readBlob(head, QStringLiteral("kernels/01-matmul/kernel.py")), QByteArray("V1 = 2\n"));
        QCOMPARE(
            readFile(tmp.filePath(QStringLiteral("kernels/01-matmul/kernel.py"))), QByteArray("V1 = 2\n"));
        // Reverted and failed attempts keep their code under their own refs.
        const QString revRef = repo.resolveRef(QStringLiteral("refs/experiments/%1").arg(reverted.id));
        QCOMPARE(
            repo.readBlob(revRef, QStringLiteral("kernels/01-matmul/kernel.py")), QByteArray("V2 = 3\n"));
        QVERIFY(repo.messageOf(revRef).startsWith(QLatin1String("worse\n")));
        QVERIFY(repo.messageOf(revRef).contains(QStringLiteral("Experiment: %1\n").arg(reverted.id)));
        QVERIFY(repo.messageOf(revRef).contains(QLatin1String("Outcome: revert")));
        QCOMPARE(repo.parentsOf(revRef), QStringList { head });
        // The best commit combines every kernel's head.
        const QString best = repo.resolveRef(QStringLiteral("refs/heads/best"));
        QCOMPARE(repo.readBlob(best, QStringLiteral("kernels/01-matmul/kernel.py")), QByteArray("V1 = 2\n"));
        QCOMPARE(
            repo.readBlob(best, QStringLiteral("kernels/02-softmax/kernel.py")), QByteArray("BASE_SM = 1\n"));
        QVERIFY(!repo.readBlob(best, QStringLiteral("run.json")).isEmpty());
        QVERIFY2(repo.verify(&error), qPrintable(error));

        // A reader sees the same, without the lock, while the writer holds it.
        const RunSnapshotPtr snap = RunLoader::load(tmp.path(), &error);
        QVERIFY2(snap, qPrintable(error));
        QVERIFY2(snap->warnings.isEmpty(), qPrintable(snap->warnings.join(QLatin1Char('\n'))));
        QCOMPARE(snap->config.model, QStringLiteral("tiny.py"));
        QCOMPARE(snap->kernels.size(), 2);
        QCOMPARE(snap->experiments.size(), 5); // two baselines + three
        QCOMPARE(snap->experiment(reverted.id)->status, ExperimentStatus::Reverted);
        QCOMPARE(snap->experiment(reverted.id)->failure, QStringLiteral("slower"));
        QCOMPARE(snap->experiment(kept.id)->metrics.latencyUs, 50.0);
        QVERIFY(std::isnan(snap->experiment(kept.id)->metrics.gbps));
        QCOMPARE(snap->kernel(QStringLiteral("01-matmul"))->head, head);
        QCOMPARE(snap->kernel(QStringLiteral("01-matmul"))->experimentCount, 3);
        QCOMPARE(snap->kernel(QStringLiteral("01-matmul"))->state, KernelState::Active);
        QCOMPARE(snap->bestCommit, best);

        const QList<QByteArray> rows = readFile(tmp.filePath(QStringLiteral("results.tsv"))).split('\n');
        QCOMPARE(rows.value(0),
            QByteArray("experiment\ttag\tkernel_type\tthroughput_tflops\tlatency_us\tpct_peak\tspeedup_vs_"
                       "pytorch\tcorrectness\tpeak_vram_mb\tdescription"));
        QCOMPARE(rows.size(), 5); // header, three rows, trailing empty
        QVERIFY(
            rows.value(3).startsWith(QByteArray(QByteArray::number(failed.id) + "\t01-matmul\tmatmul\t")));
        QVERIFY(rows.value(3).contains("\tFAIL\t"));
    }

    void agentRepliesAreKeptBesideTheExperiment()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path());
        QVERIFY(store);
        QString error;
        const Experiment e = store->beginExperiment(QStringLiteral("01-matmul"), "V1 = 2\n",
            QStringLiteral("llm:m"), QStringLiteral("tiles"), &error);
        QVERIFY2(e.id > 0, qPrintable(error));
        secrets::registerValue(QStringLiteral("sk-test-reply-0123456789"));
        QVERIFY2(store->attachReply(e.id,
                     QStringLiteral("my key is sk-test-reply-0123456789, here:\n```python\n```"), &error),
            qPrintable(error));
        const QByteArray kept = RunStore::readReply(tmp.path(), e.id);
        QVERIFY(kept.startsWith("my key is [redacted], here:"));
        QVERIFY(!kept.contains("sk-test-reply"));
        // Not in the experiment's tree: its diff and the kernel's head hold kernel.py alone.
        QVERIFY(
            store->repo().blobIdAt(e.commit, QStringLiteral("kernels/01-matmul/agent-reply.md")).isEmpty());
        QVERIFY2(store->repo().verify(&error), qPrintable(error)); // a blob ref is no broken commit ref

        // A long reply keeps its head and its tail, and says what was left out.
        const Experiment big = store->beginExperiment(
            QStringLiteral("01-matmul"), "V2 = 2\n", QStringLiteral("llm:m"), QStringLiteral("big"), &error);
        const QString head(RunStore::MaxReplyBytes, QLatin1Char('h'));
        const QString tail(RunStore::MaxReplyBytes, QLatin1Char('t'));
        QVERIFY(store->attachReply(big.id, head + tail, &error));
        const QByteArray cut = RunStore::readReply(tmp.path(), big.id);
        QVERIFY(cut.size() < RunStore::MaxReplyBytes + 200);
        QVERIFY(cut.startsWith("hhhh"));
        QVERIFY(cut.endsWith("tttt"));
        QVERIFY(cut.contains("bytes left out"));

        QVERIFY(store->attachReply(e.id + 100, QStringLiteral("x"), &error) == false);
        QVERIFY(error.contains(QStringLiteral("unknown experiment")));
        QVERIFY(RunStore::readReply(tmp.path(), 999).isEmpty());
        // The store reopens (its repair walks every ref) with the replies in place.
        store.reset();
        auto again = RunStore::open(tmp.path(), &error);
        QVERIFY2(again, qPrintable(error));
        QVERIFY(RunStore::readReply(tmp.path(), e.id).startsWith("my key is [redacted]"));
    }

    void finishIsChecked()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path());
        QString error;
        QVERIFY(!store->finishExperiment(99, ExperimentStatus::Kept, metrics(1), QString(), &error));
        QVERIFY(error.contains(QLatin1String("99")));
        const Experiment e = store->beginExperiment(
            QStringLiteral("02-softmax"), "X\n", QStringLiteral("tune"), QStringLiteral("x"), &error);
        QVERIFY(store->finishExperiment(
            e.id, ExperimentStatus::Timeout, Metrics(), QStringLiteral("took too long"), &error));
        QVERIFY(!store->finishExperiment(e.id, ExperimentStatus::Kept, metrics(1), QString(), &error));
        QVERIFY2(error.contains(QLatin1String("already finished")), qPrintable(error));
        QCOMPARE(
            store->beginExperiment(QStringLiteral("nope"), "X\n", QStringLiteral("tune"), QString(), &error)
                .id,
            0);
        QVERIFY(error.contains(QLatin1String("nope")));
    }

    void reviewModeAcceptReject()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path(), json { { "review_mode", true } });
        QString error;
        QVERIFY(store->state().reviewMode);
        const QString base = store->state().kernel(QStringLiteral("01-matmul"))->head;
        const Experiment a = store->beginExperiment(
            QStringLiteral("01-matmul"), "A\n", QStringLiteral("llm:x"), QStringLiteral("a"), &error);
        QVERIFY(store->finishExperiment(a.id, ExperimentStatus::Kept, metrics(40), QString(), &error));
        QCOMPARE(store->state().experiment(a.id)->status, ExperimentStatus::Pending);
        QCOMPARE(store->state().kernel(QStringLiteral("01-matmul"))->head, base);
        const Experiment b = store->beginExperiment(
            QStringLiteral("01-matmul"), "B\n", QStringLiteral("llm:x"), QStringLiteral("b"), &error);
        QVERIFY(store->finishExperiment(b.id, ExperimentStatus::Kept, metrics(30), QString(), &error));

        QVERIFY2(store->reject(a.id, QStringLiteral("unreadable"), &error), qPrintable(error));
        QCOMPARE(store->state().experiment(a.id)->status, ExperimentStatus::Rejected);
        QVERIFY(!store->reject(a.id, QString(), &error));
        QVERIFY2(store->accept(b.id, &error), qPrintable(error));
        const QString head = store->state().kernel(QStringLiteral("01-matmul"))->head;
        QCOMPARE(
            store->repo().readBlob(head, QStringLiteral("kernels/01-matmul/kernel.py")), QByteArray("B\n"));
        QVERIFY(store->repo().messageOf(head).contains(QLatin1String("Outcome: keep")));

        QVERIFY(store->setReviewMode(false, &error));
        const RunSnapshotPtr snap = RunLoader::load(tmp.path(), &error);
        QVERIFY(!snap->reviewMode);
        QCOMPARE(snap->experiment(a.id)->status, ExperimentStatus::Rejected);
        QCOMPARE(snap->experiment(a.id)->failure, QStringLiteral("unreadable"));
        QCOMPARE(snap->experiment(b.id)->status, ExperimentStatus::Kept);
        QCOMPARE(snap->kernel(QStringLiteral("01-matmul"))->head, head);
    }

    void pinSkipRevert()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path());
        QString error;
        const int baseline = store->state().kernel(QStringLiteral("01-matmul"))->headExperiment;
        const Experiment a = store->beginExperiment(
            QStringLiteral("01-matmul"), "A\n", QStringLiteral("tune"), QStringLiteral("a"), &error);
        QVERIFY(store->finishExperiment(a.id, ExperimentStatus::Kept, metrics(40), QString(), &error));

        QVERIFY(store->pin(QStringLiteral("01-matmul"), QStringLiteral("good enough"), &error));
        QVERIFY(!store->pin(QStringLiteral("01-matmul"), QString(), &error));
        QCOMPARE(store
                     ->beginExperiment(
                         QStringLiteral("01-matmul"), "B\n", QStringLiteral("tune"), QString(), &error)
                     .id,
            0);
        QVERIFY2(error.contains(QLatin1String("pinned")), qPrintable(error));
        QCOMPARE(store->revert(QStringLiteral("01-matmul"), baseline, &error).id, 0);
        QVERIFY(store->unpin(QStringLiteral("01-matmul"), &error));
        QVERIFY(store->skip(QStringLiteral("02-softmax"), QString(), &error));
        QCOMPARE(store->state().kernel(QStringLiteral("02-softmax"))->state, KernelState::Skipped);

        const Experiment failed = store->beginExperiment(
            QStringLiteral("01-matmul"), "F\n", QStringLiteral("tune"), QString(), &error);
        QVERIFY(store->finishExperiment(
            failed.id, ExperimentStatus::Failed, Metrics(), QStringLiteral("x"), &error));
        QCOMPARE(store->revert(QStringLiteral("01-matmul"), failed.id, &error).id, 0);
        QVERIFY2(error.contains(QLatin1String("fail")), qPrintable(error));

        const Experiment r = store->revert(QStringLiteral("01-matmul"), baseline, &error);
        QVERIFY2(r.id > failed.id, qPrintable(error));
        QCOMPARE(r.agent, QStringLiteral("user"));
        QCOMPARE(r.status, ExperimentStatus::Kept);
        const QString head = store->state().kernel(QStringLiteral("01-matmul"))->head;
        QCOMPARE(head, r.commit);
        QCOMPARE(store->repo().parentsOf(head), QStringList { store->state().experiment(a.id)->commit });
        QCOMPARE(store->kernelSource(QStringLiteral("01-matmul")), QByteArray("BASE_MM = 1\n"));
        QCOMPARE(readFile(tmp.filePath(QStringLiteral("kernels/01-matmul/kernel.py"))),
            QByteArray("BASE_MM = 1\n"));

        const RunSnapshotPtr snap = RunLoader::load(tmp.path());
        QCOMPARE(snap->kernel(QStringLiteral("01-matmul"))->state, KernelState::Active);
        QCOMPARE(snap->kernel(QStringLiteral("02-softmax"))->state, KernelState::Skipped);
        QCOMPARE(snap->kernel(QStringLiteral("01-matmul"))->headExperiment, r.id);
    }

    void secondWriterIsRefusedAndStaleLockRecovered()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path());
        QString error;
        QVERIFY(!RunStore::open(tmp.path(), &error));
        QVERIFY2(error.contains(QStringLiteral("pid %1").arg(QCoreApplication::applicationPid())),
            qPrintable(error));
        store.reset();
        auto again = RunStore::open(tmp.path(), &error);
        QVERIFY2(again, qPrintable(error));
        again.reset();

        // A lock left by a process that has exited (kill -9 of the writer).
        QProcess dead;
        dead.start(QStringLiteral("/bin/true"), {});
        QVERIFY(dead.waitForFinished());
        const qint64 pid = dead.processId() ? dead.processId() : 999999;
        QFile lock(RunLock::lockPath(tmp.path()));
        QVERIFY(lock.open(QIODevice::WriteOnly));
        lock.write(
            QByteArray::number(pid) + "\nautokernel-cli\n" + QSysInfo::machineHostName().toUtf8() + "\n");
        lock.close();
        auto recovered = RunStore::open(tmp.path(), &error);
        QVERIFY2(recovered, qPrintable(error));
    }

    void malformedLogLinesAreReportedAndSkipped()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path());
        QString error;
        const Experiment a = store->beginExperiment(
            QStringLiteral("01-matmul"), "A\n", QStringLiteral("tune"), QStringLiteral("a"), &error);
        QVERIFY(store->finishExperiment(a.id, ExperimentStatus::Kept, metrics(40), QString(), &error));
        store.reset();
        const QString log = tmp.filePath(QStringLiteral("experiments.jsonl"));
        const int lines = int(readFile(log).count('\n'));
        appendRaw(log,
            "{\"type\":\"experiment\", this is not json\n"
            "{\"type\":\"experiment\",\"id\":77,\"kernel\":\"01-matmul\",\"status\":\"great\"}\n"
            "{\"type\":\"experiment\",\"id\":\"x\",\"kernel\":\"01-matmul\",\"status\":\"keep\"}\n");
        const RunSnapshotPtr snap = RunLoader::load(tmp.path(), &error);
        QVERIFY(snap);
        QCOMPARE(snap->warnings.size(), 3);
        QVERIFY2(
            snap->warnings[0].startsWith(QStringLiteral("experiments.jsonl:%1: invalid JSON").arg(lines + 1)),
            qPrintable(snap->warnings[0]));
        QVERIFY2(snap->warnings[1].contains(
                     QStringLiteral(":%1: field \"status\": unknown status \"great\"").arg(lines + 2)),
            qPrintable(snap->warnings[1]));
        QVERIFY2(snap->warnings[2].contains(QLatin1String("\"id\"")), qPrintable(snap->warnings[2]));
        QCOMPARE(snap->experiment(a.id)->status, ExperimentStatus::Kept);
        QCOMPARE(snap->experiments.size(), 3);

        // The writer opens it too, keeps the user's lines and carries on.
        auto reopened = RunStore::open(tmp.path(), &error);
        QVERIFY2(reopened, qPrintable(error));
        QCOMPARE(reopened->state().warnings.size(), 3);
        const Experiment b = reopened->beginExperiment(
            QStringLiteral("01-matmul"), "B\n", QStringLiteral("tune"), QStringLiteral("b"), &error);
        QVERIFY(b.id > a.id);
        QVERIFY(readFile(log).contains("this is not json"));
    }

    void interruptedExperimentIsRepaired()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path());
        QString error;
        const Experiment done = store->beginExperiment(
            QStringLiteral("01-matmul"), "A\n", QStringLiteral("tune"), QStringLiteral("a"), &error);
        QVERIFY(store->finishExperiment(done.id, ExperimentStatus::Kept, metrics(40), QString(), &error));
        const Experiment cut = store->beginExperiment(
            QStringLiteral("01-matmul"), "B\n", QStringLiteral("tune"), QStringLiteral("b"), &error);
        const QString head = store->state().kernel(QStringLiteral("01-matmul"))->head;
        store.reset();
        // A torn record (no newline), a branch moved past the log, and a deleted working file.
        appendRaw(tmp.filePath(QStringLiteral("experiments.jsonl")), "{\"type\":\"experiment\",\"id\":");
        {
            auto repo = GitRepo::open(tmp.path(), &error);
            QVERIFY(repo->setRef(
                QStringLiteral("refs/heads/kernels/01-matmul"), cut.commit, QStringLiteral("test")));
        }
        QFile::remove(tmp.filePath(QStringLiteral("kernels/01-matmul/kernel.py")));

        auto repaired = RunStore::open(tmp.path(), &error);
        QVERIFY2(repaired, qPrintable(error));
        const QString notes = repaired->repairNotes().join(QLatin1Char('\n'));
        QVERIFY2(notes.contains(QLatin1String("incomplete last record")), qPrintable(notes));
        QVERIFY2(notes.contains(QStringLiteral("experiment %1: interrupted, marked crash").arg(cut.id)),
            qPrintable(notes));
        QCOMPARE(repaired->state().experiment(cut.id)->status, ExperimentStatus::Crashed);
        QCOMPARE(repaired->state().experiment(done.id)->status, ExperimentStatus::Kept);
        QCOMPARE(repaired->repo().resolveRef(QStringLiteral("refs/heads/kernels/01-matmul")), head);
        QCOMPARE(readFile(tmp.filePath(QStringLiteral("kernels/01-matmul/kernel.py"))), QByteArray("A\n"));
        const QString crashRef
            = repaired->repo().resolveRef(QStringLiteral("refs/experiments/%1").arg(cut.id));
        QCOMPARE(repaired->repo().readBlob(crashRef, QStringLiteral("kernels/01-matmul/kernel.py")),
            QByteArray("B\n"));
        QVERIFY(repaired->repo().messageOf(crashRef).contains(QLatin1String("Outcome: crash")));
        QVERIFY(readFile(tmp.filePath(QStringLiteral("experiments.jsonl"))).endsWith('\n'));
        QVERIFY(RunLoader::load(tmp.path())->warnings.isEmpty());
    }

    void orphanExperimentRefIsRecovered()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path());
        QString error;
        const Experiment e = store->beginExperiment(
            QStringLiteral("02-softmax"), "S\n", QStringLiteral("tune"), QStringLiteral("s"), &error);
        store.reset();
        // Killed after the ref, before the log line: drop that line.
        const QString log = tmp.filePath(QStringLiteral("experiments.jsonl"));
        QByteArray data = readFile(log);
        data.chop(1);
        data = data.left(data.lastIndexOf('\n') + 1);
        QFile f(log);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(data);
        f.close();
        auto repaired = RunStore::open(tmp.path(), &error);
        QVERIFY2(repaired, qPrintable(error));
        const Experiment *back = repaired->state().experiment(e.id);
        QVERIFY(back);
        QCOMPARE(back->status, ExperimentStatus::Crashed);
        QCOMPARE(back->description, QStringLiteral("s"));
        QCOMPARE(back->agent, QStringLiteral("tune"));
        QCOMPARE(repaired
                     ->beginExperiment(
                         QStringLiteral("02-softmax"), "T\n", QStringLiteral("tune"), QString(), &error)
                     .id,
            e.id + 1);
    }

    void queuedRequestsReachTheWriter()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path());
        QString error;
        QVERIFY(RequestQueue::queue(
            tmp.path(), json { { "action", "pin" }, { "kernel", "02-softmax" } }, &error));
        QVERIFY(RequestQueue::queue(tmp.path(), json { { "action", "pin" }, { "kernel", "nope" } }, &error));
        QStringList errors;
        QCOMPARE(store->applyRequests(&errors), 1);
        QCOMPARE(errors.size(), 1);
        QVERIFY(errors[0].contains(QLatin1String("nope")));
        QCOMPARE(store->state().kernel(QStringLiteral("02-softmax"))->state, KernelState::Pinned);
        QCOMPARE(store->applyRequests(), 0);
    }

    void watcherSeesAnotherWriter()
    {
        QTemporaryDir tmp;
        auto store = makeRun(tmp.path());
        RunWatcher watcher(tmp.path());
        watcher.setDebounce(20);
        QSignalSpy spy(&watcher, &RunWatcher::changed);
        QString error;
        store->beginExperiment(
            QStringLiteral("01-matmul"), "A\n", QStringLiteral("tune"), QStringLiteral("a"), &error);
        QVERIFY(spy.wait(3000));
        // Polling alone (as on a network file system) also notices.
        watcher.setPollInterval(50);
        spy.clear();
        QVERIFY(store->pin(QStringLiteral("02-softmax"), QString(), &error));
        QVERIFY(spy.wait(3000));
        QTest::qWait(200);
        QCOMPARE(spy.size(), 1); // one burst, one signal
    }
};

AK_TEST_CLASS(RunStoreTest)
#include "tst_runstore.moc"
