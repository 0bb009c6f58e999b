#pragma once

#include "runsnapshot.h"
#include "services/modeljobs.h"

#include <QWidget>

class QAction;
class QGridLayout;
class QHBoxLayout;
class QLabel;
class QProgressBar;
class QStackedWidget;
class QTableWidget;

namespace ak {

class EmptyState;
class ModelEffectChart;

// The "Model" dock: what verify measured for the open run (verification.json) — the measured model
// speedup beside the projection from the kernels' own speedups, the four timings, compile time,
// parity, where it ran, each kernel's in-model effect as a chart and the kernels left out with
// their reasons — and the Verify (with progress and cancel) and Export actions. The jobs run in
// ModelJobs, off the GUI thread; messages for the log leave through info() and failed().
class ModelView : public QWidget
{
    Q_OBJECT
public:
    explicit ModelView(QWidget *parent = nullptr);
    ~ModelView() override;

    // nullptr: no run open (actions disabled).
    void setSnapshot(const RunSnapshotPtr &snapshot);

    // Verify the shown run in the background; false when there is none or a verify runs.
    bool verify();
    // The same with the options of Model ▸ Verify With Options… (kernels, device, seeds, rounds,
    // compile); runDir is the shown run's.
    bool verify(VerifyOptions options);
    // Opens the options dialog (non-modal); its Verify starts verify(options).
    void chooseVerifyOptions();
    QAction *verifyWithOptionsAction() const { return m_verifyWithOptionsAction; }
    void cancelVerify();
    // Asks for a directory (QFileDialog), then exportTo().
    void chooseExportDirectory();
    bool exportTo(const QString &dir);

    ModelJobs *jobs() const { return m_jobs; }
    QAction *verifyAction() const { return m_verifyAction; }
    QAction *cancelAction() const { return m_cancelAction; }
    QAction *exportAction() const { return m_exportAction; }
    // Checkable, remembered across sessions: verify when a loop this window runs ends on its own
    // (the window's `run --verify-at-end`).
    QAction *verifyAtEndAction() const { return m_verifyAtEndAction; }
    // The window's loop on runDir ended: verifies it when verifyAtEndAction() is checked, the loop
    // ended on its own and runDir is the run shown. True when a verify started.
    bool loopEnded(const QString &runDir, bool onItsOwn);

    bool isShowingVerification() const;
    // The timings grid: row 0..3 = eager, eager + ours, compile, compile + ours; column 0 = ms per
    // forward, 1 = vs eager, 2 = vs compile.
    QLabel *timingLabel(int row, int column) const;

    // The projection the view shows: Amdahl over each kernel's share and its best kept speedup.
    static double projectedSpeedup(const RunSnapshot &snapshot);

Q_SIGNALS:
    void info(const QString &text);
    void failed(const QString &text);
    // A verify of runDir ended with verification.json recorded: the window reloads that run.
    void verified(const QString &runDir);

private:
    // The constructor's steps, in the order it runs them (widget creation and connection order kept:
    // it sets tab order and signal order).
    void setUpActions();
    void connectJobs();
    QHBoxLayout *createButtons();
    QWidget *createContent();
    void showVerification(const RunSnapshot &snapshot, const ModelVerification &v);
    void showTimings(const ModelVerification &v);
    void showLeftOut(const ModelVerification &v);
    void verifyProgress(const QString &message, double fraction);
    void verifyFinished(const VerifyOutcome &outcome);
    void exportFinished(const ExportOutcome &outcome);
    void setStatus(const QString &text, bool error);
    void updateActions();

    RunSnapshotPtr m_snapshot;
    QString m_verifyingRun; // the run the running verify is for (the user may open another)
    ModelJobs *m_jobs;
    QAction *m_verifyAction;
    QAction *m_cancelAction;
    QAction *m_exportAction;
    QAction *m_verifyAtEndAction;
    QAction *m_verifyWithOptionsAction;
    QProgressBar *m_progress;
    QLabel *m_status;
    QStackedWidget *m_stack;
    EmptyState *m_empty;
    QLabel *m_measured;
    QLabel *m_projected;
    QGridLayout *m_timings;
    QLabel *m_compileTime;
    QLabel *m_parity;
    QLabel *m_finalSet;
    QLabel *m_environment;
    ModelEffectChart *m_chart;
    QTableWidget *m_leftOut;
};

} // namespace ak
