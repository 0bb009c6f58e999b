// A folder's contract (#38, docs/contracts.md): written with the kernel's record, read back by every
// reader, and a folder the plug-check refused is "not pluggable" for good: loaded in that state with
// its reason, and no steering gives it budget.
#include "experimentlog.h"
#include "kernelcontract.h"
#include "runloader.h"
#include "runsteering.h"
#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QTemporaryDir>

using namespace ak;
using nlohmann::json;

namespace {

test::TestKernel norm(int rank, const QString &refused)
{
    test::TestKernel k
        = test::testKernel(rank, QStringLiteral("rmsnorm"), "BASE = 1\n", QStringLiteral("rmsnorm"), 0.2);
    k.record.contract.callable
        = QStringLiteral("module:transformers.models.gemma.modeling_gemma.GemmaRMSNorm");
    k.record.contract.attrs = json { { "eps", 1e-5 }, { "offset", 1.0 } };
    k.record.contract.refused = refused;
    return k;
}

} // namespace

class KernelContractTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void roundTripsThroughJson()
    {
        const KernelContract c = norm(1, QStringLiteral("why")).record.contract;
        const json j = c.toJson();
        QCOMPARE(j["attrs"]["eps"].get<double>(), 1e-5);
        QCOMPARE(KernelContract::fromJson(j), c);
        QCOMPARE(c.callableName(), QStringLiteral("GemmaRMSNorm"));
        QCOMPARE(c.attributesText(), QStringLiteral("eps 1e-05 · offset 1"));
        // An empty contract (a run made before #38) writes nothing and reads back empty.
        QVERIFY(KernelContract().toJson().empty());
        QVERIFY(KernelContract::fromJson(json::object()).isEmpty());
        QVERIFY(KernelContract::fromJson(json("not an object")).isEmpty());
    }

    void recordCarriesTheContract()
    {
        const KernelRecord k = norm(1, QString()).record;
        const json j = ExperimentLog::kernelRecordToJson(k);
        QVERIFY(j.contains("contract"));
        QCOMPARE(j["contract"]["callable"].get<std::string>(), k.contract.callable.toStdString());
        // A record without one writes no field: older readers see what they always saw.
        QVERIFY(!ExperimentLog::kernelRecordToJson(test::testKernel(2, QStringLiteral("x")).record)
                     .contains("contract"));
    }

    void refusedFolderIsNotPluggableAndGetsNoSteering()
    {
        QTemporaryDir tmp;
        const QString why = QStringLiteral("plug-check: eps 1e-06, the model's call has 1e-05");
        QVERIFY(test::makeRunDir(
            tmp.path(), json { { "model", "tiny.py" } }, { norm(1, QString()), norm(2, why) }));
        const RunSnapshotPtr s = RunLoader::load(tmp.path());
        QVERIFY(s);
        const KernelRecord *ok = s->kernel(QStringLiteral("01-rmsnorm"));
        const KernelRecord *refused = s->kernel(QStringLiteral("02-rmsnorm"));
        QVERIFY(ok && refused);
        QCOMPARE(ok->state, KernelState::Waiting);
        QCOMPARE(ok->contract.attrs["offset"].get<double>(), 1.0);
        QCOMPARE(refused->state, KernelState::Unpluggable);
        QCOMPARE(refused->stateReason, why);
        QCOMPARE(kernelStateText(refused->state, false), QStringLiteral("not pluggable"));
        QCOMPARE(kernelStateName(refused->state), QStringLiteral("unpluggable"));

        // Pin, skip, unskip: refused with the reason, and the log is not touched.
        for (const auto action :
            { SteerRequest::Action::Pin, SteerRequest::Action::Skip, SteerRequest::Action::Unskip }) {
            const RunSteering::Outcome o = RunSteering::steer(
                tmp.path(), SteerRequest::kernelAction(action, QStringLiteral("02-rmsnorm")));
            QVERIFY(!o.ok());
            QVERIFY2(o.message.contains(QLatin1String("not pluggable")), qPrintable(o.message));
        }
        QCOMPARE(RunLoader::load(tmp.path())->kernel(QStringLiteral("02-rmsnorm"))->state,
            KernelState::Unpluggable);
    }
};

AK_TEST_CLASS(KernelContractTest)
#include "tst_kernelcontract.moc"
