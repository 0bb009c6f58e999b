// verification.json into ModelVerification and RunSnapshot, the projection, and the kernel table's
// In model column.
#include "amdahl.h"
#include "loop/modelverifier.h"
#include "modelfixture.h"
#include "models/kernelfilterproxy.h"
#include "models/kerneltablemodel.h"
#include "modelverification.h"
#include "runloader.h"
#include "runreport.h"
#include "runstore.h"
#include "testregistry.h"
#include "testsnapshot.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <cmath>

using ak::KernelTableModel;
using ak::ModelVerification;

namespace {

QByteArray bytes(const nlohmann::json &j)
{
    return QByteArray::fromStdString(j.dump(2));
}

// testsnapshot's three kernels plus 04-gelu, with the verification of modelfixture.h.
std::shared_ptr<ak::RunSnapshot> verifiedRun(bool withCompile = true)
{
    auto s = ak::test::makeRun(QStringLiteral("/r"));
    s->kernels.append(ak::test::kernel(4, QStringLiteral("gelu_kernel"), QStringLiteral("gelu"), 40.0, 0.02));
    QStringList warnings;
    s->verification = ModelVerification::parse(
        bytes(ak::test::verificationDict(withCompile)), QStringLiteral("verification.json"), &warnings);
    return s;
}

// One in-model check during the run (inmodel.json), `minutes` after the fixture's verification.
ak::InModelCheck liveCheck(const ak::RunSnapshot &s, const QString &kernel, int experiment, double effect,
    int minutes, bool harnessWin = true)
{
    QString error;
    ak::InModelCheck c = *ak::InModelCheck::fromReply(
        nlohmann::json { { "kernel", kernel.toStdString() }, { "plugged", true },
            { "parity", { { "ok", true } } }, { "effect_pct", effect }, { "limit_pct", 1.0 } },
        &error);
    c.experiment = experiment;
    c.harnessWin = harnessWin;
    c.when = s.verification->when.addSecs(60 * minutes);
    return c;
}

bool writeFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(data) == data.size();
}

} // namespace

class ModelVerificationTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void parsesEveryField()
    {
        QStringList warnings;
        const auto v = ModelVerification::parse(
            bytes(ak::test::verificationDict(true)), QStringLiteral("verification.json"), &warnings);
        QVERIFY(v);
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(QLatin1Char('\n'))));
        QCOMPARE(v->kernels.size(), 4);
        QCOMPARE(v->finalSet, QStringList { QStringLiteral("01-matmul") });
        QCOMPARE(v->eager.medianUs, 15230.0);
        QVERIFY(v->compileOurs.measured);
        QCOMPARE(v->compileOurs.speedupVsCompile, 11890.0 / 11580.0);
        QCOMPARE(v->compileSeconds, 48.2);
        QCOMPARE(v->compileOursSeconds, 51.7);
        QCOMPARE(v->modelSpeedup, 15230.0 / 14420.0);
        QVERIFY(v->parityOk);
        QCOMPARE(v->seeds, (QVector<qint64> { 11, 22, 33 }));
        QCOMPARE(v->deviceName, QStringLiteral("NVIDIA H200"));
        QCOMPARE(v->triton, QStringLiteral("3.1.0"));
        QCOMPARE(v->when, QDateTime(QDate(2025, 6, 3), QTime(9, 14, 27), Qt::UTC));
        const ak::KernelVerification *softmax = v->kernel(QStringLiteral("02-softmax"));
        QVERIFY(softmax && softmax->plugged && softmax->parityOk && !softmax->inFinalSet);
        QCOMPARE(softmax->effectPct, -1.3);
        QVERIFY(softmax->whyNot.startsWith(QStringLiteral("slows the model down")));
        const ak::KernelVerification *layernorm = v->kernel(QStringLiteral("03-layernorm"));
        QVERIFY(layernorm && !layernorm->plugged && std::isnan(layernorm->effectPct));
        const ak::KernelVerification *gelu = v->kernel(QStringLiteral("04-gelu"));
        QVERIFY(gelu && gelu->parityChecked && !gelu->parityOk);
        QCOMPARE(gelu->parityError, 37.5);
        QCOMPARE(gelu->sites,
            (QStringList { QStringLiteral("transformer.h.0.attn"), QStringLiteral("transformer.h.1.attn") }));
    }

    void torchWithoutCompileHasNoCompileTimings()
    {
        QStringList warnings;
        const auto v = ModelVerification::parse(
            bytes(ak::test::verificationDict(false)), QStringLiteral("verification.json"), &warnings);
        QVERIFY(v);
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(QLatin1Char('\n'))));
        QVERIFY(!v->compile.measured && !v->compileOurs.measured);
        QCOMPARE(v->compile.error, QStringLiteral("torch 1.13.1 has no torch.compile"));
        QVERIFY(std::isnan(v->compileSeconds));
        QVERIFY(v->triton.isEmpty()); // null: not installed
        QVERIFY(v->eagerOurs.measured);
    }

    // #40: the mode the set was chosen in, and each kernel's saving in eager mode and under compile.
    void modeAndPerKernelVersus()
    {
        nlohmann::json d = ak::test::verificationDict(true);
        QStringList warnings;
        auto v = ModelVerification::parse(bytes(d), QStringLiteral("verification.json"), &warnings);
        QCOMPARE(v->mode, QStringLiteral("eager")); // written before modes: eager
        QVERIFY(std::isnan(v->kernels[0].savedEagerUs) && std::isnan(v->kernels[0].savedCompileUs));

        d["mode"] = "compile";
        d["kernels"][0]["versus"] = { { "sites_eager_us", 900.0 },
            { "eager", { { "saved_us", 120.5 }, { "effect_pct", 4.2 }, { "noise_pct", 0.5 } } },
            { "compile", { { "saved_us", -40.0 }, { "effect_pct", -2.1 }, { "noise_pct", 0.6 } } },
            { "compile_wins", true } };
        d["kernels"][1]["versus"]
            = { { "eager", { { "saved_us", -12.0 }, { "effect_pct", -1.3 }, { "noise_pct", 0.5 } } },
                  { "compile", nullptr }, { "compile_note", "not measured" } };
        v = ModelVerification::parse(bytes(d), QStringLiteral("verification.json"), &warnings);
        QVERIFY(v);
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(QLatin1Char('\n'))));
        QCOMPARE(v->mode, QStringLiteral("compile"));
        QCOMPARE(v->kernels[0].savedEagerUs, 120.5);
        QCOMPARE(v->kernels[0].savedCompileUs, -40.0);
        QVERIFY(v->kernels[0].compileWins);
        QCOMPARE(v->kernels[1].savedEagerUs, -12.0);
        QVERIFY(std::isnan(v->kernels[1].savedCompileUs)); // null: not measured in that mode
        QVERIFY(!v->kernels[1].compileWins);

        d["kernels"][0]["versus"]["compile"]["saved_us"] = "fast";
        v = ModelVerification::parse(bytes(d), QStringLiteral("verification.json"), &warnings);
        QVERIFY(std::isnan(v->kernels[0].savedCompileUs));
        QVERIFY2(warnings.contains(QStringLiteral(
                     "verification.json: \"kernels[0].versus.compile.saved_us\" is not a number")),
            qPrintable(warnings.join(QLatin1Char('\n'))));
    }

    // #43 item 3: each kernel's cold re-check (its paired ratios' percentiles and verdict), and the
    // report lists it; older files have none.
    void coldRecheckIsReadAndReported()
    {
        nlohmann::json d = ak::test::verificationDict(true);
        QStringList warnings;
        auto v = ModelVerification::parse(bytes(d), QStringLiteral("verification.json"), &warnings);
        QCOMPARE(v->kernels[0].recheck.pairs, 0);
        d["kernels"][0]["recheck"] = { { "pairs", 20 }, { "p10", 1.04 }, { "median", 1.12 }, { "p90", 1.2 },
            { "offered", true }, { "ratios", nlohmann::json::array({ 1.1, 1.2 }) } };
        v = ModelVerification::parse(bytes(d), QStringLiteral("verification.json"), &warnings);
        QVERIFY2(warnings.isEmpty(), qPrintable(warnings.join(QLatin1Char('\n'))));
        QCOMPARE(v->kernels[0].recheck.pairs, 20);
        QCOMPARE(v->kernels[0].recheck.p10, 1.04);
        QCOMPARE(v->kernels[0].recheck.median, 1.12);
        QVERIFY(v->kernels[0].recheck.offered);
        ak::RunSnapshot run;
        run.verification = v;
        const QString html = ak::RunReport::html(run, nullptr, QDateTime::currentDateTimeUtc());
        QVERIFY2(html.contains(QStringLiteral("id=\"recheck\""))
                && html.contains(QStringLiteral("over 20 paired rounds: offered")),
            qPrintable(html));
    }

    void badFieldsWarnNamingFileAndField()
    {
        nlohmann::json d = ak::test::verificationDict(true);
        d["kernels"][1]["effect_pct"] = "a lot";
        d["seeds"] = { 11, "x" };
        QStringList warnings;
        auto v = ModelVerification::parse(bytes(d), QStringLiteral("verification.json"), &warnings);
        QVERIFY(v); // one odd field does not hide the rest
        QVERIFY(warnings.contains(
            QStringLiteral("verification.json: \"kernels[1].effect_pct\" is not a number")));
        QVERIFY(std::isnan(v->kernel(QStringLiteral("02-softmax"))->effectPct));
        QCOMPARE(v->kernel(QStringLiteral("01-matmul"))->effectPct, 4.2);
        QCOMPARE(warnings.size(), 2);
        QVERIFY(warnings.at(1).contains(QStringLiteral("\"seeds\"")));

        d = ak::test::verificationDict(true);
        d["timings"]["eager"].erase("median_us");
        warnings.clear();
        v = ModelVerification::parse(bytes(d), QStringLiteral("verification.json"), &warnings);
        QVERIFY(!v); // no eager timing: nothing to compare with
        QVERIFY2(warnings.join(QLatin1Char('\n'))
                     .contains(QStringLiteral("\"timings.eager.median_us\" is missing")),
            qPrintable(warnings.join(QLatin1Char('\n'))));

        warnings.clear();
        QVERIFY(!ModelVerification::parse(
            "{\"format\": \"something else\"}", QStringLiteral("verification.json"), &warnings));
        QVERIFY(warnings.value(0).contains(QStringLiteral("\"format\"")));
        warnings.clear();
        QVERIFY(!ModelVerification::parse("{not json", QStringLiteral("verification.json"), &warnings));
        QVERIFY(warnings.value(0).startsWith(QStringLiteral("verification.json: not a JSON object")));
    }

    void loaderReadsVerificationAndSurvivesABadOne()
    {
        QTemporaryDir dir;
        QString error;
        QVERIFY2(ak::test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        ak::RunSnapshotPtr run = ak::RunLoader::load(dir.path(), &error);
        QVERIFY2(run, qPrintable(error));
        QVERIFY2(run->warnings.isEmpty(), qPrintable(run->warnings.join(QLatin1Char('\n'))));
        QVERIFY(run->verification);
        QCOMPARE(run->verification->finalSet.size(), 4);
        QCOMPARE(run->verification->kernel(QStringLiteral("06-layernorm"))->effectPct, 0.8);

        nlohmann::json d = ak::test::verificationDict(true);
        d["timings"]["eager+ours"]["median_us"] = "fast";
        QVERIFY(writeFile(dir.filePath(QStringLiteral("verification.json")), bytes(d)));
        run = ak::RunLoader::load(dir.path(), &error);
        QVERIFY2(run, qPrintable(error)); // the run still loads
        QVERIFY(!run->verification);
        QCOMPARE(run->kernels.size(), 6);
        QVERIFY2(run->warnings.join(QLatin1Char('\n'))
                     .contains(QStringLiteral(
                         "verification.json: \"timings.eager+ours.median_us\" is not a number")),
            qPrintable(run->warnings.join(QLatin1Char('\n'))));

        QVERIFY(QFile::remove(dir.filePath(QStringLiteral("verification.json"))));
        run = ak::RunLoader::load(dir.path(), &error);
        QVERIFY(run && !run->verification);
    }

    // A verification is recorded the way every other steering request is (RunSteering): committed
    // when nobody writes the run, queued for the writer while one does, and applied by it.
    void recordCommitsOrQueuesForTheWriter()
    {
        QTemporaryDir dir;
        QString error, how;
        QVERIFY2(ak::test::makeVerifiedRun(dir.path(), &error), qPrintable(error));
        nlohmann::json d = ak::test::verificationDict(true);
        d["timings"]["eager+ours"]["median_us"] = 123.0;
        QVERIFY2(ak::ModelVerifier::record(dir.path(), d, &how, &error), qPrintable(error));
        QCOMPARE(how, QStringLiteral("committed"));
        QCOMPARE(ak::RunLoader::load(dir.path(), &error)->verification->eagerOurs.medianUs, 123.0);

        std::unique_ptr<ak::RunStore> writer = ak::RunStore::open(dir.path(), &error); // a loop's lock
        QVERIFY2(writer, qPrintable(error));
        d["timings"]["eager+ours"]["median_us"] = 99.0;
        QVERIFY2(ak::ModelVerifier::record(dir.path(), d, &how, &error), qPrintable(error));
        QCOMPARE(how, QStringLiteral("queued for the process writing the run"));
        QCOMPARE(ak::RunLoader::load(dir.path(), &error)->verification->eagerOurs.medianUs, 123.0); // not yet
        QStringList problems;
        QCOMPARE(writer->applyRequests(&problems), 1);
        QVERIFY2(problems.isEmpty(), qPrintable(problems.join(QLatin1Char('\n'))));
        QCOMPARE(ak::RunLoader::load(dir.path(), &error)->verification->eagerOurs.medianUs, 99.0);
    }

    void projectionFromKeptSpeedups()
    {
        // Half the time 2x faster saves a quarter; slower or unmeasured kernels do not count.
        QCOMPARE(ak::Amdahl::projectedFromSpeedups({ { 0.5, 2.0 }, { 0.25, 0.8 }, { 0.1, std::nan("") } }),
            1.0 / 0.75);
        QCOMPARE(ak::Amdahl::projectedFromSpeedups({}), 1.0);
        QCOMPARE(ak::Amdahl::projectedFromSpeedups({ { 0.2, 1.25 }, { 0.3, 1.5 } }),
            1.0 / (1.0 - 0.2 * 0.2 - 0.3 / 3.0));
    }

    void tableInModelColumn()
    {
        KernelTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto s = verifiedRun();
        model.resetRows(KernelTableModel::rowsFrom(*s));
        QCOMPARE(
            model.headerData(KernelTableModel::InModelColumn, Qt::Horizontal, Qt::DisplayRole).toString(),
            QStringLiteral("In model"));
        auto cell
            = [&](int row, int role) { return model.index(row, KernelTableModel::InModelColumn).data(role); };
        QCOMPARE(cell(0, Qt::DisplayRole).toString(), QStringLiteral("+4.2 % ✓"));
        QCOMPARE(cell(0, KernelTableModel::SortRole).toDouble(), 4.2);
        QCOMPARE(cell(1, Qt::DisplayRole).toString(), QStringLiteral("−1.3 % left out"));
        QCOMPARE(cell(1, KernelTableModel::SortRole).toDouble(), -1.3);
        QVERIFY(cell(1, Qt::ToolTipRole).toString().contains(QStringLiteral("slows the model down")));
        QCOMPARE(cell(2, Qt::DisplayRole).toString(), QStringLiteral("not plugged"));
        QVERIFY(std::isnan(cell(2, KernelTableModel::SortRole).toDouble()));
        QVERIFY(cell(2, Qt::ToolTipRole).toString().contains(QStringLiteral("eps 1e-06")));
        QCOMPARE(cell(3, Qt::DisplayRole).toString(), QStringLiteral("parity ✗"));
        QVERIFY(cell(3, Qt::ToolTipRole).toString().contains(QStringLiteral("37.5 tolerances")));

        // Not verified: empty text, NaN to sort by.
        model.resetRows(KernelTableModel::rowsFrom(*ak::test::makeRun(QStringLiteral("/r"))));
        QVERIFY(cell(0, Qt::DisplayRole).toString().isEmpty());
        QVERIFY(std::isnan(cell(0, KernelTableModel::SortRole).toDouble()));
        QVERIFY(cell(0, Qt::ToolTipRole).toString().contains(QStringLiteral("Verify")));
    }

    void inModelColumnIsLiveDuringTheRun()
    {
        KernelTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto s = verifiedRun();
        auto cell
            = [&](int row, int role) { return model.index(row, KernelTableModel::InModelColumn).data(role); };
        // A check newer than the verification is what the column shows; an older one is not.
        s->inModel.checks << liveCheck(*s, QStringLiteral("01-matmul"), 7, 3.25, 5)
                          << liveCheck(*s, QStringLiteral("02-softmax"), 8, 9.0, -5);
        model.resetRows(KernelTableModel::rowsFrom(*s));
        QVERIFY2(cell(0, Qt::DisplayRole).toString().endsWith(QStringLiteral(" run")),
            qPrintable(cell(0, Qt::DisplayRole).toString()));
        QCOMPARE(cell(0, KernelTableModel::SortRole).toDouble(), 3.25);
        QVERIFY2(cell(0, Qt::ToolTipRole).toString().contains(QStringLiteral("during the run"))
                && cell(0, Qt::ToolTipRole).toString().contains(QStringLiteral("keep #7")),
            qPrintable(cell(0, Qt::ToolTipRole).toString()));
        QCOMPARE(cell(1, Qt::DisplayRole).toString(), QStringLiteral("−1.3 % left out")); // the verification

        // Without a verification the checks are all there is; a new check appears as the loop writes it.
        auto live = ak::test::makeRun(QStringLiteral("/r"));
        live->verification = s->verification; // for liveCheck's clock only
        const ak::InModelCheck first = liveCheck(*live, QStringLiteral("02-softmax"), 4, 0.4, 1);
        live->verification.reset();
        model.resetRows(KernelTableModel::rowsFrom(*live));
        QVERIFY(cell(1, Qt::DisplayRole).toString().isEmpty());
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        live->inModel.checks << first; // a harness win with no gain beyond the noise: a miss
        model.setRows(KernelTableModel::rowsFrom(*live));
        QCOMPARE(changed.count(), 1);
        QVERIFY2(cell(1, Qt::DisplayRole).toString().endsWith(QStringLiteral("run \u2717")),
            qPrintable(cell(1, Qt::DisplayRole).toString()));
        QVERIFY2(
            cell(1, Qt::ToolTipRole).toString().contains(QStringLiteral("1 kept harness win(s) in a row")),
            qPrintable(cell(1, Qt::ToolTipRole).toString()));
        QVERIFY(cell(1, Qt::ToolTipRole).toString().contains(QStringLiteral("moves on at 2")));
    }

    void unverifiedRowsSortLastAndDoNotChurn()
    {
        KernelTableModel model;
        ak::KernelFilterProxy proxy;
        proxy.setSourceModel(&model);
        auto s = verifiedRun();
        model.resetRows(KernelTableModel::rowsFrom(*s));
        proxy.sort(KernelTableModel::InModelColumn, Qt::DescendingOrder);
        auto keyAt = [&](int row) { return proxy.index(row, 0).data(KernelTableModel::KeyRole).toString(); };
        QCOMPARE(keyAt(0), QStringLiteral("01-matmul"));
        QCOMPARE(keyAt(1), QStringLiteral("02-softmax"));
        QVERIFY(
            keyAt(2) == QStringLiteral("03-layernorm") || keyAt(2) == QStringLiteral("04-gelu")); // both NaN
        proxy.sort(KernelTableModel::InModelColumn, Qt::AscendingOrder);
        QCOMPARE(keyAt(2), QStringLiteral("02-softmax"));
        QCOMPARE(keyAt(3), QStringLiteral("01-matmul"));

        // A reload with the same data changes nothing, although NaN is unequal to itself.
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.setRows(KernelTableModel::rowsFrom(*s));
        QCOMPARE(changed.count(), 0);
    }
};

AK_TEST_CLASS(ModelVerificationTest)
#include "tst_modelverification.moc"
