// RunRecording: a run written as one text file and restored elsewhere loads exactly as the original
// (experiments, commits, heads, best, replies, diffs readable), is marked as a recording, and passes
// git's consistency check; a damaged or hostile recording is refused, naming what is wrong, and
// leaves nothing behind; a run holding a file that is not text cannot be recorded.
#include "gitrepo.h"
#include "runloader.h"
#include "runrecording.h"
#include "runstore.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

using namespace ak;

namespace {

QByteArray readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

bool writeAll(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

} // namespace

class RunRecordingTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void roundTrip()
    {
        QTemporaryDir tmp;
        const QString run = tmp.filePath(QStringLiteral("run"));
        QVERIFY(test::makeRunDir(run,
            nlohmann::json { { "model", "gpt2" }, { "device", { { "name", "NVIDIA H200" } } } },
            { test::testKernel(1, QStringLiteral("matmul"), "BASE = 1\n", QStringLiteral("matmul"), 0.6),
                test::testKernel(
                    2, QStringLiteral("softmax"), "BASE = 2\n", QStringLiteral("softmax"), 0.3) }));
        int replied = 0;
        {
            QString error;
            auto store = RunStore::open(run, &error);
            QVERIFY2(store, qPrintable(error));
            test::recordExperiment(*store, QStringLiteral("01-matmul"), 1.5, ExperimentStatus::Kept);
            test::recordExperiment(*store, QStringLiteral("01-matmul"), 1.2, ExperimentStatus::Reverted);
            replied
                = test::recordExperiment(*store, QStringLiteral("02-softmax"), 2.0, ExperimentStatus::Kept);
            QVERIFY(store->attachReply(replied, QStringLiteral("BLOCK = 128 — faster (“quoted”)"), &error));
        }
        const QString file = tmp.filePath(QStringLiteral("run.recording.json"));
        QString error;
        QVERIFY2(RunRecording::write(run, file, QStringLiteral("a test run"), &error), qPrintable(error));
        RunRecording::Info info;
        QVERIFY(RunRecording::peek(readAll(file), &info, &error));
        QCOMPARE(info.device, QStringLiteral("NVIDIA H200"));
        QCOMPARE(info.note, QStringLiteral("a test run"));

        const QString copy = tmp.filePath(QStringLiteral("restored"));
        QVERIFY2(RunRecording::restore(readAll(file), file, copy, &error), qPrintable(error));
        const RunSnapshotPtr a = RunLoader::load(run), b = RunLoader::load(copy);
        QVERIFY(a && b);
        QCOMPARE(b->experiments.size(), a->experiments.size());
        for (int i = 0; i < a->experiments.size(); ++i) {
            QCOMPARE(b->experiments[i].commit, a->experiments[i].commit);
            QCOMPARE(b->experiments[i].parent, a->experiments[i].parent);
            QCOMPARE(b->experiments[i].status, a->experiments[i].status);
        }
        for (int i = 0; i < a->kernels.size(); ++i)
            QCOMPARE(b->kernels[i].headExperiment, a->kernels[i].headExperiment);
        QCOMPARE(b->bestCommit, a->bestCommit);
        QCOMPARE(b->projectedSpeedup(), a->projectedSpeedup());
        QVERIFY(b->warnings.isEmpty());
        // The diff of an experiment and its reply read from the copy as from the original.
        auto repo = GitRepo::open(copy, &error);
        QVERIFY(repo);
        QVERIFY2(repo->verify(&error), qPrintable(error));
        const Experiment *kept = b->experiment(replied);
        QCOMPARE(repo->readBlob(kept->commit, QStringLiteral("kernels/02-softmax/kernel.py")),
            QByteArray("X = 2\n"));
        QCOMPARE(RunStore::readReply(copy, replied), RunStore::readReply(run, replied));
        QCOMPARE(readAll(copy + QStringLiteral("/kernels/02-softmax/kernel.py")), QByteArray("X = 2\n"));
        // Labelled: the copy is a recording, the original is not.
        QVERIFY(a->recording.isEmpty());
        QVERIFY2(b->recording.contains(QStringLiteral("recording of the gpt2 run on NVIDIA H200")),
            qPrintable(b->recording));
        // The copy is a run like any other: a store opens it (the loop could go on in it).
        QVERIFY2(RunStore::open(copy, &error), qPrintable(error));

        // Into a folder that holds something: refused, and what was there stays.
        QVERIFY(!RunRecording::restore(readAll(file), file, run, &error));
        QVERIFY(error.contains(QStringLiteral("not empty")));
        QVERIFY(QFile::exists(run + QStringLiteral("/run.json")));
    }

    void damagedRecordingsAreRefused()
    {
        QTemporaryDir tmp;
        const QString run = tmp.filePath(QStringLiteral("run"));
        QVERIFY(test::makeRunDir(run));
        {
            QString error;
            auto store = RunStore::open(run, &error);
            QVERIFY(store);
            test::recordExperiment(*store, QStringLiteral("01-matmul"), 1.5, ExperimentStatus::Kept);
        }
        const QString file = tmp.filePath(QStringLiteral("r.json"));
        QString error;
        QVERIFY2(RunRecording::write(run, file, QString(), &error), qPrintable(error));
        const nlohmann::json good = nlohmann::json::parse(readAll(file).toStdString());

        auto refused = [&](const nlohmann::json &bad, const QString &expected) {
            const QString dir = tmp.filePath(QStringLiteral("bad"));
            QString why;
            const bool ok = RunRecording::restore(
                QByteArray::fromStdString(bad.dump()), QStringLiteral("r.json"), dir, &why);
            QVERIFY2(!ok, qPrintable(expected));
            QVERIFY2(why.contains(expected), qPrintable(why));
            QVERIFY2(!QFileInfo::exists(dir), "a failed restore leaves nothing"); // removed again
        };
        nlohmann::json bad = good;
        bad["blobs"].begin().value() = "tampered\n";
        refused(bad, QStringLiteral("does not match its content"));
        bad = good;
        bad["commits"].back()["message"] = "rewritten history\n";
        refused(bad, QStringLiteral("came back as"));
        bad = good;
        bad["commits"].back()["tree"]["../escape.py"] = bad["commits"].back()["tree"].begin().value();
        refused(bad, QStringLiteral("leaves the run directory"));
        bad = good;
        bad["format"] = "something-else";
        refused(bad, QStringLiteral("not an AutoKernel recording"));
        bad["format"] = 5; // a wrong type is refused as such, not thrown
        refused(bad, QStringLiteral("not an AutoKernel recording"));
        bad = good;
        bad["version"] = "1";
        refused(bad, QStringLiteral("\"version\" \"1\" is not one this program reads"));
        // A wrongly typed offset reads as 0 (RunStore writes UTC): the commit still comes back whole.
        QCOMPARE(good["commits"].back().value("offset_minutes", -1), 0);
        bad = good;
        bad["commits"].back()["offset_minutes"] = "UTC";
        QVERIFY2(RunRecording::restore(QByteArray::fromStdString(bad.dump()), QStringLiteral("r.json"),
                     tmp.filePath(QStringLiteral("utc")), &error),
            qPrintable(error));
        // A description of the wrong shape costs the summary, not the recording.
        bad = good;
        bad["recording"] = { { "device", 5 }, { "experiments", "many" } };
        RunRecording::Info info;
        QVERIFY(RunRecording::peek(QByteArray::fromStdString(bad.dump()), &info, &error));
        QVERIFY(info.device.isEmpty());
        QCOMPARE(info.experiments, 0);
        bad = good;
        bad.erase("commits");
        refused(bad, QStringLiteral("\"commits\""));
        refused(nlohmann::json::array(), QStringLiteral("not an AutoKernel recording"));

        // Text only: a run holding a binary file is not recorded, and the file is named.
        QVERIFY(writeAll(run + QStringLiteral("/verification.json"), QByteArray("\x89PNG\0\x01", 6)));
        QVERIFY(!RunRecording::write(run, tmp.filePath(QStringLiteral("r2.json")), QString(), &error));
        QVERIFY2(
            error.contains(QStringLiteral("verification.json")) && error.contains(QStringLiteral("text")),
            qPrintable(error));
        QVERIFY(!RunRecording::write(tmp.filePath(QStringLiteral("nothing")), file, QString(), &error));
        QVERIFY(error.contains(QStringLiteral("not a run directory")));
    }
};

AK_TEST_CLASS(RunRecordingTest)
#include "tst_runrecording.moc"
