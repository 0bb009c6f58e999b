#pragma once

#include "experiment.h"
#include "models/experimentfilterproxy.h"
#include "runsnapshot.h"
#include "widgets/experimentdetails.h"

#include <QWidget>

class QAction;
class QLineEdit;
class QSortFilterProxyModel;
class QSplitter;
class QStackedWidget;
class QTabWidget;
class QTableView;

namespace ak {

class RunSummaryBar;
class EmptyState;
class ExperimentModel;
class KernelFilterProxy;
class KernelTableModel;
class ModelSpeedupChart;
class SteeringActions;
class ThroughputChart;
class ThroughputChartModel;

// The regions of an open run: ranked kernel table with search (top left), throughput chart of the
// selected kernel or, in a second tab, the model's speedup over the run (top right), commit list (bottom
// left) and diff of the selected commit (bottom right, ExperimentDetails). Owns the models; MainWindow feeds
// it snapshots.
class RunWorkspace : public QWidget
{
    Q_OBJECT
public:
    using BlobReader = ExperimentDetails::BlobReader;

    RunWorkspace(SteeringActions *steering, QWidget *parent = nullptr);
    ~RunWorkspace() override;

    // A snapshot of a different run resets every model; one of the same run updates in place.
    void setSnapshot(const RunSnapshotPtr &snapshot);
    RunSnapshotPtr snapshot() const { return m_snapshot; }
    void setBlobReader(BlobReader reader);

    QByteArray saveState() const;
    void restoreState(const QByteArray &state);

    KernelTableModel *kernelModel() const { return m_kernelModel; }
    KernelFilterProxy *kernelProxy() const { return m_kernelProxy; }
    ExperimentModel *experimentModel() const { return m_experimentModel; }
    ExperimentFilterProxy *experimentProxy() const { return m_experimentProxy; }
    ThroughputChartModel *chartModel() const { return m_chartModel; }
    ThroughputChart *throughputChart() const { return m_chart; }
    ModelSpeedupChart *modelChart() const { return m_modelChart; }
    QTabWidget *chartTabs() const { return m_chartTabs; }
    RunSummaryBar *summaryBar() const { return m_summary; }
    // Selects the experiment in the commit list (and its kernel in the table, clearing a search that
    // hides it); false when the run has no such experiment.
    bool selectExperiment(int id);
    // Loop ▸ Next Pending (N): the next experiment waiting for review after the selected one, in id
    // order, wrapping; enabled while any waits.
    QAction *nextPendingAction() const { return m_nextPending; }
    // Loop ▸ Show Pending Only: the commit list shows every kernel's pending experiments.
    QAction *pendingOnlyAction() const { return m_pendingOnly; }
    bool selectNextPending();
    // View ▸ Compare Baseline with Best (Ctrl+B): the selected kernel's baseline against its head.
    QAction *compareBestAction() const { return m_compareBest; }
    bool compareBaselineWithBest();
    bool isShowingKernels() const;
    bool isShowingCommits() const;
    QString selectedKernel() const { return m_selectedKernel; }

Q_SIGNALS:
    void message(const QString &text);

protected:
    bool focusNextPrevChild(bool next) override;

private:
    // The constructor's steps, in the order it runs them (widget creation and connection order kept:
    // it sets tab order and signal order).
    void createKernelPanel();
    void createChartTabs();
    void createCommitList();
    void createActions();
    void layOut();
    void connectSelections();
    void kernelSelectionChanged();
    void experimentSelectionChanged();
    void refreshKernelDependents();
    void updateEmptyStates();
    // Scrolls the commit list so that experiment `id` is its top row again after a live update.
    void keepCommitAtTop(int id);
    void compareExperiments(const Experiment &older, const Experiment &newer);
    void compareChosen();

    SteeringActions *m_steering;
    RunSnapshotPtr m_snapshot;
    QString m_selectedKernel;
    int m_selectedExperiment = 0;
    bool m_headersRestored = false;

    KernelTableModel *m_kernelModel;
    KernelFilterProxy *m_kernelProxy;
    ExperimentModel *m_experimentModel;
    ExperimentFilterProxy *m_experimentProxy;
    ThroughputChartModel *m_chartModel;

    QSplitter *m_vertical;
    QSplitter *m_top;
    QSplitter *m_bottom;
    QLineEdit *m_search;
    QStackedWidget *m_kernelStack;
    QStackedWidget *m_commitStack;
    EmptyState *m_kernelEmpty;
    EmptyState *m_commitEmpty;
    QTableView *m_kernelView;
    QTableView *m_commitView;
    QTabWidget *m_chartTabs = nullptr;
    ThroughputChart *m_chart;
    ModelSpeedupChart *m_modelChart = nullptr;
    ExperimentDetails *m_details = nullptr;
    RunSummaryBar *m_summary = nullptr;
    QAction *m_nextPending = nullptr;
    QAction *m_pendingOnly = nullptr;
    QAction *m_compareBest = nullptr;
    QHash<QString, QString> m_whereInModel; // KernelTableModel::whereInModel of the run shown
};

} // namespace ak
