// RunSteering::steer, the one entry point of the CLI, the window and the in-process loop: applied
// at once when nobody writes the run, queued for the writer when another one holds the lock, and
// the queued file is the request's JSON, which the writer applies when it next reads its queue.
#include "requestqueue.h"
#include "runloader.h"
#include "runlock.h"
#include "runsteering.h"
#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

using namespace ak;
using nlohmann::json;

namespace {

// A run with one kernel, "01-matmul".
const json kRunJson { { "model", "tiny.py" }, { "settings", json::object() } };
const std::vector<test::TestKernel> kKernels { test::testKernel(
    1, QStringLiteral("matmul"), "BASE = 1\n", QStringLiteral("matmul"), 0.5) };

QStringList queued(const QString &dir)
{
    return QDir(RequestQueue::dir(dir)).entryList(QDir::Files, QDir::Name);
}

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

const QString kKernel = QStringLiteral("01-matmul");

} // namespace

class RunSteeringTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void appliesWhenNobodyWrites()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        const auto pin = SteerRequest::kernelAction(SteerRequest::Action::Pin, kKernel)
                             .withReason(QStringLiteral("fast enough"));
        const RunSteering::Outcome o = RunSteering::steer(tmp.path(), pin);
        QCOMPARE(o.kind, RunSteering::Outcome::Kind::Applied);
        QVERIFY(o.ok());
        QVERIFY2(o.message.isEmpty(), qPrintable(o.message));
        QCOMPARE(o.writer, qint64(0));
        QVERIFY(o.state);
        QCOMPARE(o.state->kernel(kKernel)->state, KernelState::Pinned);
        QVERIFY(queued(tmp.path()).isEmpty());
        QCOMPARE(RunLoader::load(tmp.path())->kernel(kKernel)->state, KernelState::Pinned);
        QCOMPARE(RunLock::holderPid(tmp.path()), qint64(0)); // the lock was let go again
    }

    void refusedRequestSaysWhy()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        const RunSteering::Outcome o = RunSteering::steer(
            tmp.path(), SteerRequest::kernelAction(SteerRequest::Action::Revert, kKernel, 999));
        QCOMPARE(o.kind, RunSteering::Outcome::Kind::Refused);
        QVERIFY(!o.ok());
        QVERIFY2(o.message.contains(QLatin1String("999")), qPrintable(o.message));
        QCOMPARE(o.created.id, 0);
    }

    void revertSaysWhatItCreated()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        const int baseline = RunLoader::load(tmp.path())->experiments.constFirst().id;
        QString error;
        {
            auto store = RunStore::open(tmp.path(), &error);
            QVERIFY2(store, qPrintable(error));
            QVERIFY(
                store->finishExperiment(baseline, ExperimentStatus::Baseline, Metrics(), QString(), &error));
        }
        const RunSteering::Outcome o = RunSteering::steer(
            tmp.path(), SteerRequest::kernelAction(SteerRequest::Action::Revert, kKernel, baseline));
        QVERIFY2(o.kind == RunSteering::Outcome::Kind::Applied, qPrintable(o.message));
        QVERIFY(o.created.id > baseline);
        QVERIFY(!o.created.commit.isEmpty());
    }

    void queuesWhileAnotherWriterHoldsTheRun()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        QString error;
        auto writer = RunStore::open(tmp.path(), &error); // the loop, as far as steer() can tell
        QVERIFY2(writer, qPrintable(error));
        const SteerRequest request
            = SteerRequest::kernelAction(SteerRequest::Action::Skip, kKernel).withReason(QString());
        const RunSteering::Outcome o = RunSteering::steer(tmp.path(), request);
        QCOMPARE(o.kind, RunSteering::Outcome::Kind::Queued);
        QVERIFY(o.ok());
        QCOMPARE(o.writer, RunLock::holderPid(tmp.path()));
        QCOMPARE(o.message,
            QStringLiteral("queued for the writer of the run (pid %1), which applies it between experiments")
                .arg(o.writer));
        const QStringList files = queued(tmp.path());
        QCOMPARE(files.size(), 1);
        QCOMPARE(readFile(QDir(RequestQueue::dir(tmp.path())).filePath(files.first())),
            QByteArray(R"({"action":"skip","experiment":0,"kernel":"01-matmul","reason":""})"));
        QVERIFY(writer->state().kernel(kKernel)->state != KernelState::Skipped); // not before the boundary

        QStringList errors;
        QCOMPARE(writer->applyRequests(&errors), 1);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join(QLatin1Char('\n'))));
        QCOMPARE(writer->state().kernel(kKernel)->state, KernelState::Skipped);
    }

    void anUnreadableOutcomeRecordIsSaidSoAndConsumed()
    {
        // The writer's record of a queued request, read back by the requester: a damaged one is
        // reported as such (not as applied), and taking it removes it like a good one.
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        QVERIFY(QDir().mkpath(RequestQueue::doneDir(tmp.path())));
        const QString done = RequestQueue::doneDir(tmp.path());
        auto write = [&done](const QString &name, const QByteArray &bytes) {
            QFile f(QDir(done).filePath(name));
            return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
        };
        QVERIFY(
            write(QStringLiteral("good.json"), R"({"ok": false, "text": "01-matmul is already skipped"})"));
        QVERIFY(write(QStringLiteral("torn.json"), R"({"ok": tr)"));
        QVERIFY(write(QStringLiteral("typed.json"), R"({"ok": "yes", "text": "applied"})"));
        RequestQueue::Outcome o;
        QVERIFY(!RequestQueue::outcome(tmp.path(), QStringLiteral("absent.json"), &o, true));
        QVERIFY(RequestQueue::outcome(tmp.path(), QStringLiteral("good.json"), &o, false));
        QVERIFY(!o.ok);
        QCOMPARE(o.text, QStringLiteral("01-matmul is already skipped"));
        QVERIFY(QFile::exists(QDir(done).filePath(QStringLiteral("good.json")))); // not taken
        for (const QString &name : { QStringLiteral("torn.json"), QStringLiteral("typed.json") }) {
            RequestQueue::Outcome bad;
            bad.ok = true;
            QVERIFY(RequestQueue::outcome(tmp.path(), name, &bad, true));
            QVERIFY(!bad.ok);
            QCOMPARE(bad.text, QStringLiteral("the writer's record of the request is not readable"));
            QVERIFY(!QFile::exists(QDir(done).filePath(name)));
        }
    }

    void queuesForOurOwnLoopWithoutTheLock()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        const RunSteering::Outcome o
            = RunSteering::steer(tmp.path(), SteerRequest::review(true), RunSteering::Writer::ThisProcess);
        QCOMPARE(o.kind, RunSteering::Outcome::Kind::Queued);
        QCOMPARE(o.writer, QCoreApplication::applicationPid());
        QCOMPARE(queued(tmp.path()).size(), 1);
        QVERIFY(!RunLoader::load(tmp.path())->reviewMode);
    }

    void reviewModeAlreadySoChangesNothing()
    {
        QTemporaryDir tmp;
        QVERIFY(test::makeRunDir(tmp.path(), kRunJson, kKernels));
        const QByteArray log = readFile(QDir(tmp.path()).filePath(QStringLiteral("experiments.jsonl")));
        const RunSteering::Outcome o = RunSteering::steer(tmp.path(), SteerRequest::review(false));
        QCOMPARE(o.kind, RunSteering::Outcome::Kind::Applied);
        QCOMPARE(readFile(QDir(tmp.path()).filePath(QStringLiteral("experiments.jsonl"))), log);
    }

    void failsWhenNoRunAndNoWriter()
    {
        QTemporaryDir tmp;
        const RunSteering::Outcome o = RunSteering::steer(tmp.path(), SteerRequest::review(true));
        QCOMPARE(o.kind, RunSteering::Outcome::Kind::Failed);
        QVERIFY2(o.message.contains(QLatin1String("not a run directory")), qPrintable(o.message));
        QVERIFY(queued(tmp.path()).isEmpty());
    }
};

AK_TEST_CLASS(RunSteeringTest)
#include "tst_runsteering.moc"
