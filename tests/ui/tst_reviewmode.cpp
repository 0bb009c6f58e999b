// Loop ▸ Review Mode: toggled in the window it switches the open run's review mode through the
// window's DirectoryControl (directly when nobody writes the run, queued for the writer otherwise); the
// check and the status bar follow the run as loaded; a control without the capability disables it.
#include "fakeloopcontrol.h"
#include "mainwindow.h"
#include "requestqueue.h"
#include "runloader.h"
#include "runlock.h"
#include "runstore.h"
#include "services/directorycontrol.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <nlohmann/json.hpp>

using namespace ak;

namespace {

// A run with one kernel and, when `pending`, one experiment waiting for review; closed again.
bool makeRun(const QString &dir, bool pending = false)
{
    if (!test::makeRunDir(dir))
        return false;
    if (!pending)
        return true;
    QString error;
    auto store = RunStore::open(dir, &error);
    if (!store) {
        qWarning("%s", qPrintable(error));
        return false;
    }
    const Experiment e = store->beginExperiment(
        QStringLiteral("01-matmul"), "BASE = 2\n", QStringLiteral("test"), QStringLiteral("try"), &error);
    if (!store->setReviewMode(true, &error) || e.id == 0
        || !store->finishExperiment(e.id, ExperimentStatus::Kept, Metrics(), QString(), &error)) {
        qWarning("%s", qPrintable(error));
        return false;
    }
    return true;
}

bool reviewModeOnDisk(const QString &dir)
{
    const RunSnapshotPtr s = RunLoader::load(dir);
    return s && s->reviewMode;
}

} // namespace

class ReviewModeTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void toggleWritesTheRun()
    {
        QTemporaryDir tmp;
        QVERIFY(makeRun(tmp.path()));
        MainWindow w;
        QAction *review = test::named<QAction>(&w, "ReviewModeAction");
        QVERIFY(review->isCheckable());
        QVERIFY(!review->isEnabled()); // no run yet
        QVERIFY(test::openAndWait(w, tmp.path()));
        auto *control = qobject_cast<DirectoryControl *>(
            test::named<SteeringActions>(&w, "SteeringActions")->loopControl());
        QVERIFY(control);
        QVERIFY(control->capabilities().testFlag(LoopControl::CanSetReviewMode));
        QTRY_VERIFY(control->isWriterKnown());
        QVERIFY2(review->isEnabled(), qPrintable(review->toolTip()));
        QVERIFY(!review->isChecked());
        QVERIFY(review->toolTip().contains(QStringLiteral("Switch review mode on")));
        QVERIFY(test::named<QLabel>(&w, "ReviewModeLabel")->isHidden());

        QSignalSpy finished(control, &LoopControl::actionFinished);
        QSignalSpy failed(control, &LoopControl::actionFailed);
        review->trigger(); // checks it
        QTRY_COMPARE_WITH_TIMEOUT(finished.count() + failed.count(), 1, 10000);
        QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().at(1).toString()));
        QCOMPARE(finished.first().at(0).toString(), QStringLiteral("setReviewMode"));
        QVERIFY(!QFileInfo::exists(RunLock::lockPath(tmp.path()))); // applied directly, store closed again
        QVERIFY(reviewModeOnDisk(tmp.path()));

        // After the reload the check and the status bar show the run's mode.
        QTRY_VERIFY_WITH_TIMEOUT(!test::named<QLabel>(&w, "ReviewModeLabel")->isHidden(), 10000);
        QVERIFY(review->isChecked());
        QVERIFY(test::named<QLabel>(&w, "ReviewModeLabel")->text().contains(QStringLiteral("Review mode")));
        QVERIFY(review->toolTip().contains(QStringLiteral("Review mode is on")));

        review->trigger(); // unchecks it
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 2, 10000);
        QVERIFY(!reviewModeOnDisk(tmp.path()));
        QTRY_VERIFY_WITH_TIMEOUT(test::named<QLabel>(&w, "ReviewModeLabel")->isHidden(), 10000);
        QVERIFY(!review->isChecked());
    }

    void labelCountsPendingExperiments()
    {
        QTemporaryDir tmp;
        QVERIFY(makeRun(tmp.path(), true));
        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        QVERIFY(test::named<QAction>(&w, "ReviewModeAction")->isChecked());
        QVERIFY(!test::named<QLabel>(&w, "ReviewModeLabel")->isHidden());
        QVERIFY2(
            test::named<QLabel>(&w, "ReviewModeLabel")->text().contains(QStringLiteral("1 waiting for you")),
            qPrintable(test::named<QLabel>(&w, "ReviewModeLabel")->text()));
    }

    void queuedWhileAnotherProcessWrites()
    {
        QTemporaryDir tmp;
        QVERIFY(makeRun(tmp.path()));
        auto writer = std::make_unique<RunLock>(tmp.path());
        QString error;
        QVERIFY2(writer->acquire(&error), qPrintable(error));
        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        auto *control = qobject_cast<DirectoryControl *>(
            test::named<SteeringActions>(&w, "SteeringActions")->loopControl());
        QVERIFY(control);
        QSignalSpy finished(control, &LoopControl::actionFinished);
        QVERIFY(test::named<QAction>(&w, "ReviewModeAction")->isEnabled());
        test::named<QAction>(&w, "ReviewModeAction")->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 10000);
        QVERIFY(finished.first().at(1).toString().contains(QStringLiteral("queued for the writer")));
        const QDir requests(RequestQueue::dir(tmp.path()));
        const QStringList queued = requests.entryList(QDir::Files);
        QCOMPARE(queued.size(), 1);
        QFile f(requests.filePath(queued.first()));
        QVERIFY(f.open(QIODevice::ReadOnly));
        const nlohmann::json request = nlohmann::json::parse(f.readAll().toStdString());
        QCOMPARE(request.value("action", std::string()), std::string("review"));
        QCOMPARE(request.value("value", false), true);
        QVERIFY(!reviewModeOnDisk(tmp.path())); // not yet
        // The writer applies it at its next boundary (here: on open).
        writer.reset();
        auto store = RunStore::open(tmp.path(), &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY(store->state().reviewMode);
        QVERIFY(reviewModeOnDisk(tmp.path()));
    }

    void disabledWithoutTheCapability()
    {
        QTemporaryDir tmp;
        QVERIFY(makeRun(tmp.path()));
        MainWindow w;
        QVERIFY(test::openAndWait(w, tmp.path()));
        FakeLoopControl fake(LoopControl::CanStartStop | LoopControl::CanSteerKernels);
        w.setLoopControl(&fake);
        QVERIFY(!test::named<QAction>(&w, "ReviewModeAction")->isEnabled());
        QVERIFY2(test::named<QAction>(&w, "ReviewModeAction")
                     ->toolTip()
                     .contains(QStringLiteral("not supported by fake loop")),
            qPrintable(test::named<QAction>(&w, "ReviewModeAction")->toolTip()));
        w.setLoopControl(nullptr);

        SteeringActions actions; // no loop attached
        actions.setRunReviewMode(true);
        QVERIFY(!actions.reviewMode()->isEnabled());
        QVERIFY(actions.reviewMode()->isChecked());
        QVERIFY(actions.reviewMode()->toolTip().contains(QStringLiteral("No optimisation loop is attached")));
    }

    void defaultImplementationRefuses()
    {
        FakeLoopControl fake(LoopControl::CanStartStop);
        QSignalSpy failed(&fake, &LoopControl::actionFailed);
        fake.setReviewMode(true);
        QCOMPARE(failed.count(), 1);
        QCOMPARE(failed.first().at(0).toString(), QStringLiteral("setReviewMode"));
        QVERIFY(failed.first().at(1).toString().contains(QStringLiteral("not supported")));

        // A refused switch puts the check back to the run's mode.
        FakeLoopControl refusing(LoopControl::CanSetReviewMode);
        SteeringActions actions;
        actions.setLoopControl(&refusing);
        actions.setRunReviewMode(false);
        QVERIFY(actions.reviewMode()->isEnabled());
        actions.reviewMode()->trigger(); // the fake uses the default body: refused
        QVERIFY(!actions.reviewMode()->isChecked());
    }
};

AK_TEST_CLASS(ReviewModeTest)
#include "tst_reviewmode.moc"
