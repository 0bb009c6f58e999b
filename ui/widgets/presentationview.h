#pragma once

#include "runsnapshot.h"
#include "widgets/experimentdetails.h"

#include <QWidget>

class QLabel;

namespace ak {

class DiffView;
class ModelSpeedupChart;
class RunSummaryBar;
class ThroughputChart;
class ThroughputChartModel;

// View ▸ Presentation (F5): the run for a room, full screen in large type. The headline is the
// model's speedup (measured when verified, else projected); below it the run summary, the model's
// speedup over the run beside the current kernel's experiments, and the latest kept change's diff.
// Fed the same snapshots as the window (live reloads and replay frames alike), so a replay played
// here is a demo. Esc or F5 leaves it.
class PresentationView : public QWidget
{
    Q_OBJECT
public:
    explicit PresentationView(QWidget *parent = nullptr);
    ~PresentationView() override;

    void setBlobReader(ExperimentDetails::BlobReader reader) { m_blobReader = std::move(reader); }
    void setSnapshot(const RunSnapshotPtr &snapshot);
    // Where the loop runs, as the window's summary says it ("in this window", "" = none).
    void setLoop(const QString &where);

    // The experiment whose diff is shown (the newest that moved a kernel's head); 0 when none.
    int shownExperiment() const { return m_shownExperiment; }
    // The kernel the throughput chart follows: the one the loop is on, else the newest experiment's.
    QString shownKernel() const { return m_kernel; }
    QString headline() const;
    DiffView *diffView() const { return m_diff; }
    ModelSpeedupChart *modelChart() const { return m_modelChart; }
    ThroughputChart *kernelChart() const { return m_kernelChart; }

Q_SIGNALS:
    void closed();

protected:
    void keyPressEvent(QKeyEvent *event) override;
    void closeEvent(QCloseEvent *event) override;

private:
    void showLatestChange(const RunSnapshot &run);

    RunSnapshotPtr m_snapshot;
    ExperimentDetails::BlobReader m_blobReader;
    QString m_kernel;
    int m_shownExperiment = 0;
    quint64 m_generation = 0;

    QLabel *m_title;
    QLabel *m_headline;
    QLabel *m_headlineNote;
    RunSummaryBar *m_summary;
    ModelSpeedupChart *m_modelChart;
    ThroughputChartModel *m_kernelModel;
    ThroughputChart *m_kernelChart;
    QLabel *m_diffTitle;
    DiffView *m_diff;
};

} // namespace ak
