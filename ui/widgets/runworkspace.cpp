#include "widgets/runworkspace.h"

#include "models/experimentfilterproxy.h"
#include "widgets/runsummarybar.h"

#include "models/costdelegate.h"
#include "models/experimentmodel.h"
#include "models/kernelfilterproxy.h"
#include "models/kerneltablemodel.h"
#include "models/throughputchartmodel.h"
#include "widgets/diffview.h"
#include "widgets/emptystate.h"
#include "widgets/experimentdetails.h"
#include "widgets/modelspeedupchart.h"
#include "widgets/steeringactions.h"
#include "widgets/throughputchart.h"

#include <QAction>
#include <QDataStream>

#include <QApplication>
#include <QHeaderView>
#include <QLineEdit>
#include <QScrollBar>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

namespace ak {

namespace {

constexpr int kMaxFittedColumnWidth = 280; // px; wider columns are the user's choice
// 2: the kernel table's Experiments and State columns moved after Kernel (saved headers of 1 ignored).
// 3: the commit list shows Description after Speedup (what each attempt tried, and why not kept).
constexpr quint32 kStateVersion = 3;

QTableView *makeTable(QAbstractItemModel *model, QWidget *parent)
{
    auto *view = new QTableView(parent);
    view->setModel(model);
    view->setSortingEnabled(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->setAlternatingRowColors(true);
    view->setWordWrap(false);
    view->verticalHeader()->hide();
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
    view->horizontalHeader()->setHighlightSections(false);
    view->horizontalHeader()->setSectionsMovable(true);
    // Tab leaves the table (arrows move between cells): the kernel table, the commit list and the
    // diff are one Tab apart, not a cell apart.
    view->setTabKeyNavigation(false);
    return view;
}

} // namespace

RunWorkspace::RunWorkspace(SteeringActions *steering, QWidget *parent)
    : QWidget(parent)
    , m_steering(steering)
    , m_kernelModel(new KernelTableModel(this))
    , m_kernelProxy(new KernelFilterProxy(this))
    , m_experimentModel(new ExperimentModel(this))
    , m_experimentProxy(new ExperimentFilterProxy(this))
    , m_chartModel(new ThroughputChartModel(this))
    , m_vertical(new QSplitter(Qt::Vertical, this))
    , m_top(new QSplitter(Qt::Horizontal, m_vertical))
    , m_bottom(new QSplitter(Qt::Horizontal, m_vertical))
{
    setObjectName(QStringLiteral("RunWorkspace"));
    m_kernelProxy->setSourceModel(m_kernelModel);
    m_experimentProxy->setSourceModel(m_experimentModel);
    m_experimentProxy->setSortRole(ExperimentModel::SortRole);
    m_experimentProxy->setFilterRole(ExperimentModel::KernelKeyRole);

    createKernelPanel();
    createChartTabs();
    createCommitList();

    // The selected experiment's change and, beside it, what the agent answered to produce it.
    m_details = new ExperimentDetails(m_bottom);
    connect(m_details, &ExperimentDetails::message, this, &RunWorkspace::message);
    m_summary = new RunSummaryBar(this);
    createActions();
    layOut();
    connectSelections();

    updateEmptyStates();
}

// The kernel table with its search box, over the empty state while there are no kernels.
void RunWorkspace::createKernelPanel()
{
    auto *kernelPanel = new QWidget(m_top);
    auto *kernelLayout = new QVBoxLayout(kernelPanel);
    kernelLayout->setContentsMargins(0, 0, 0, 0);
    m_search = new QLineEdit(kernelPanel);
    m_search->setObjectName(QStringLiteral("KernelSearch"));
    m_search->setPlaceholderText(tr("Filter kernels by name, op, shape, dtype or state"));
    m_search->setClearButtonEnabled(true);
    connect(m_search, &QLineEdit::textChanged, m_kernelProxy, &KernelFilterProxy::setSearchText);
    connect(m_search, &QLineEdit::returnPressed, m_kernelProxy, &KernelFilterProxy::applySearchNow);
    m_kernelStack = new QStackedWidget(kernelPanel);
    m_kernelEmpty = new EmptyState(m_kernelStack);
    m_kernelView = makeTable(m_kernelProxy, m_kernelStack);
    m_kernelEmpty->setObjectName(QStringLiteral("KernelEmptyState"));
    m_kernelView->setObjectName(QStringLiteral("KernelView"));
    auto *cost = new CostDelegate(KernelTableModel::SortRole, KernelTableModel::TotalCostRole, this);
    m_kernelView->setItemDelegateForColumn(KernelTableModel::ShareColumn, cost);
    m_kernelView->setItemDelegateForColumn(KernelTableModel::RoofColumn, cost);
    m_kernelView->sortByColumn(KernelTableModel::RankColumn, Qt::AscendingOrder);
    m_kernelView->horizontalHeader()->setSectionResizeMode(
        KernelTableModel::ShapesColumn, QHeaderView::Interactive);
    m_kernelView->setTextElideMode(Qt::ElideMiddle);
    m_kernelStack->addWidget(m_kernelEmpty);
    m_kernelStack->addWidget(m_kernelView);
    kernelLayout->addWidget(m_search);
    kernelLayout->addWidget(m_kernelStack);
}

void RunWorkspace::createChartTabs()
{
    // The selected kernel's experiments, or the whole model's projected speedup over the run.
    m_chartTabs = new QTabWidget(m_top);
    m_chartTabs->setObjectName(QStringLiteral("ChartTabs"));
    m_chart = new ThroughputChart(m_chartModel, m_chartTabs);
    m_modelChart = new ModelSpeedupChart(m_chartTabs);
    m_chartTabs->addTab(m_chart, tr("Kernel"));
    m_chartTabs->addTab(m_modelChart, tr("Model"));
    m_chartTabs->setTabToolTip(0, tr("The selected kernel's experiments against the device's peak"));
    m_chartTabs->setTabToolTip(1, tr("The whole model's projected (and measured) speedup over the run"));
    // The Model chart follows the run only while it is shown (see setSnapshot): switching to it
    // catches up with the run on screen.
    connect(m_chartTabs, &QTabWidget::currentChanged, this, [this] {
        if (m_chartTabs->currentWidget() == m_modelChart && m_snapshot)
            m_modelChart->setSnapshot(*m_snapshot);
    });
}

// The commit list, over the empty state while there are no experiments.
void RunWorkspace::createCommitList()
{
    m_commitStack = new QStackedWidget(m_bottom);
    m_commitEmpty = new EmptyState(m_commitStack);
    m_commitView = makeTable(m_experimentProxy, m_commitStack);
    m_commitEmpty->setObjectName(QStringLiteral("CommitEmptyState"));
    m_commitView->setObjectName(QStringLiteral("CommitView"));
    m_commitView->setItemDelegateForColumn(ExperimentModel::RoofColumn,
        new CostDelegate(ExperimentModel::SortRole, ExperimentModel::TotalCostRole, this));
    m_commitView->sortByColumn(ExperimentModel::IdColumn, Qt::DescendingOrder); // newest first
    m_commitView->horizontalHeader()->setStretchLastSection(true);
    m_commitView->setSelectionMode(QAbstractItemView::ExtendedSelection); // two chosen: compared
    // What matters first (#41): each attempt's outcome, number and what it tried, in view at 1280 px;
    // the description's tooltip carries the verdict's reason. The rest follows, as before.
    m_commitView->horizontalHeader()->moveSection(
        m_commitView->horizontalHeader()->visualIndex(ExperimentModel::DescriptionColumn),
        m_commitView->horizontalHeader()->visualIndex(ExperimentModel::SpeedupColumn) + 1);
    m_commitStack->addWidget(m_commitEmpty);
    m_commitStack->addWidget(m_commitView);
}

// Next Pending, Compare Baseline with Best and Show Pending Only (the View and Loop menus hold them).
void RunWorkspace::createActions()
{
    m_nextPending = new QAction(tr("&Next Pending"), this);
    m_nextPending->setObjectName(QStringLiteral("NextPendingAction"));
    m_nextPending->setShortcut(Qt::Key_N);
    m_nextPending->setEnabled(false);
    connect(m_nextPending, &QAction::triggered, this, &RunWorkspace::selectNextPending);
    m_compareBest = new QAction(tr("Compare &Baseline with Best"), this);
    m_compareBest->setObjectName(QStringLiteral("CompareBaselineBestAction"));
    m_compareBest->setShortcut(Qt::CTRL | Qt::Key_B);
    m_compareBest->setToolTip(tr("The diff shows the selected kernel's baseline against its best kept "
                                 "version (or choose any two experiments with Ctrl+click)"));
    connect(m_compareBest, &QAction::triggered, this, [this] { compareBaselineWithBest(); });
    m_pendingOnly = new QAction(tr("Show &Pending Only"), this);
    m_pendingOnly->setObjectName(QStringLiteral("PendingOnlyAction"));
    m_pendingOnly->setCheckable(true);
    m_pendingOnly->setToolTip(QStringLiteral(
        "The commit list shows the experiments waiting for accept or reject, of every kernel"));
    connect(m_pendingOnly, &QAction::toggled, this, [this](bool on) {
        m_experimentProxy->setPendingOnly(on);
        updateEmptyStates();
    });
}

// The splitters' shares, and the summary bar over them.
void RunWorkspace::layOut()
{
    m_top->setStretchFactor(0, 3);
    m_top->setStretchFactor(1, 2);
    // Half each: at 2:3 the commit list got 235 px at 1280×800, each attempt's description off-screen.
    m_bottom->setStretchFactor(0, 1);
    m_bottom->setStretchFactor(1, 1);
    m_bottom->setSizes({ 1000, 1000 }); // the stretch alone left the diff its larger size hint
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(m_summary);
    layout->addWidget(m_vertical);
}

// A kernel chosen shows its experiments; an experiment chosen, its change; two chosen, their diff.
void RunWorkspace::connectSelections()
{
    connect(m_kernelView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        &RunWorkspace::kernelSelectionChanged);
    connect(m_commitView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
        &RunWorkspace::experimentSelectionChanged);
    connect(m_commitView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
        &RunWorkspace::compareChosen);
}

RunWorkspace::~RunWorkspace() = default;

bool RunWorkspace::isShowingKernels() const
{
    return m_kernelStack->currentWidget() == m_kernelView;
}

bool RunWorkspace::isShowingCommits() const
{
    return m_commitStack->currentWidget() == m_commitView;
}

void RunWorkspace::setSnapshot(const RunSnapshotPtr &snapshot)
{
    const bool sameRun = m_snapshot && snapshot && m_snapshot->runDir == snapshot->runDir;
    m_snapshot = snapshot;
    if (snapshot) {
        m_summary->setSnapshot(*snapshot);
        // It recomputes the whole run's projection over time: ~25 ms on a 10k-experiment run, at
        // every reload of a live run (bench_live); a hidden Model tab waits until it is shown.
        if (m_chartTabs->currentWidget() == m_modelChart)
            m_modelChart->setSnapshot(*snapshot);
    } else {
        m_modelChart->clear();
    }
    bool anyPending = false;
    for (const Experiment &e : snapshot ? snapshot->experiments : QVector<Experiment>())
        anyPending = anyPending || e.status == ExperimentStatus::Pending;
    m_nextPending->setEnabled(anyPending);
    m_nextPending->setToolTip(anyPending ? tr("Select the next experiment waiting for accept or reject (N)")
                                         : tr("Next Pending — no experiment waits for review"));
    QVector<KernelRow> kernels = snapshot ? KernelTableModel::rowsFrom(*snapshot) : QVector<KernelRow>();
    if (!sameRun)
        m_whereInModel
            = snapshot ? KernelTableModel::whereInModel(snapshot->runDir) : QHash<QString, QString>();
    for (KernelRow &row : kernels)
        row.where = m_whereInModel.value(row.key);
    const QVector<Experiment> experiments = snapshot ? snapshot->experiments : QVector<Experiment>();
    // Newest first: arriving rows go in above the ones being read and push them down, so a click
    // meant for one lands on another (issue #14). Scrolled away from the top, the top row stays put;
    // at the top, the newest rows show as they arrive.
    int topId = 0;
    if (sameRun && m_commitView->verticalScrollBar()->value() > 0) {
        const QModelIndex top = m_commitView->indexAt(QPoint(0, 0));
        topId = top.isValid() ? top.data(ExperimentModel::IdRole).toInt() : 0;
    }
    if (sameRun) {
        m_kernelModel->setRows(kernels);
        m_experimentModel->setRows(experiments);
    } else {
        m_selectedKernel.clear();
        m_selectedExperiment = 0;
        m_kernelModel->resetRows(kernels);
        m_experimentModel->resetRows(experiments);

        m_details->showNoSelection();
    }
    refreshKernelDependents();
    // The selected experiment's outcome may have changed (accepted, rejected, restored by the loop):
    // the steering actions follow it, not only a change of the selected row.
    if (sameRun)
        experimentSelectionChanged();
    updateEmptyStates();
    if (topId != 0)
        keepCommitAtTop(topId);
    // Fit columns to a new run once the views are current (a hidden view measures no rows); the
    // user's saved column widths win over fitting.
    if (!sameRun && !m_headersRestored) {
        QTimer::singleShot(0, this, [this] {
            m_kernelView->resizeColumnsToContents();
            m_commitView->resizeColumnsToContents();
            // Kernel symbols (C++ template names) run to hundreds of characters; capped and elided in
            // the middle, the numbers that rank them stay in view. The full name is in the tooltip.
            for (QTableView *view : { m_kernelView, m_commitView })
                for (int c = 0; c < view->model()->columnCount(); ++c)
                    view->setColumnWidth(c, std::min(view->columnWidth(c), kMaxFittedColumnWidth));
        });
    }
}

void RunWorkspace::keepCommitAtTop(int id)
{
    const int row = m_experimentModel->rowOfId(id);
    const QModelIndex index
        = row < 0 ? QModelIndex() : m_experimentProxy->mapFromSource(m_experimentModel->index(row, 0));
    if (!index.isValid())
        return; // filtered out or gone: nothing to hold on to
    // scrollTo also brings column 0 into view; the user's horizontal position is theirs.
    QScrollBar *horizontal = m_commitView->horizontalScrollBar();
    const int x = horizontal->value();
    m_commitView->scrollTo(index, QAbstractItemView::PositionAtTop);
    horizontal->setValue(x);
}

void RunWorkspace::updateEmptyStates()
{
    const bool hasKernels = m_kernelModel->rowCount() > 0;
    if (!hasKernels) {
        m_kernelEmpty->setMessage(tr("This run has no profiled kernels"),
            QStringLiteral("Profile a model into a run directory, then open it:\n"
                           "autokernel-cli profile --model gpt2 --out RUN_DIR"));
    }
    m_kernelStack->setCurrentWidget(hasKernels ? static_cast<QWidget *>(m_kernelView) : m_kernelEmpty);

    const bool hasExperiments = m_experimentProxy->rowCount() > 0;
    if (!hasExperiments) {
        if (m_experimentModel->rowCount() == 0)
            m_commitEmpty->setMessage(tr("No experiments yet"),
                QStringLiteral("Every attempt of the optimisation loop is a commit and appears here, "
                               "newest first. Start the loop (Loop ▸ Start) to create some."));
        else
            m_commitEmpty->setMessage(tr("No experiments on %1 yet").arg(m_selectedKernel),
                tr("Select another kernel, or clear the selection to list every commit."));
    }
    m_commitStack->setCurrentWidget(hasExperiments ? static_cast<QWidget *>(m_commitView) : m_commitEmpty);
}

void RunWorkspace::kernelSelectionChanged()
{
    const QModelIndex current = m_kernelView->selectionModel()->currentIndex();
    m_selectedKernel = current.isValid() ? current.data(KernelTableModel::KeyRole).toString() : QString();
    refreshKernelDependents();
    updateEmptyStates();
}

void RunWorkspace::refreshKernelDependents()
{
    const KernelRecord *kernel
        = m_snapshot && !m_selectedKernel.isEmpty() ? m_snapshot->kernel(m_selectedKernel) : nullptr;
    if (!kernel) {
        // The hash index is filled by the loader; hand-built snapshots may lack it.
        for (const KernelRow &row : m_kernelModel->rows())
            if (row.key == m_selectedKernel)
                kernel = &row.kernel;
    }
    m_experimentProxy->setFilterRegularExpression(kernel
            ? QRegularExpression(QStringLiteral("^%1$").arg(QRegularExpression::escape(m_selectedKernel)))
            : QRegularExpression());
    // One kernel's commits all name it: its column goes, and what each attempt tried moves into view.
    m_commitView->setColumnHidden(ExperimentModel::KernelColumn, kernel != nullptr);
    if (kernel) {
        m_steering->setKernel(m_selectedKernel, kernel->state);
        m_chartModel->setKernel(*kernel, m_selectedKernel, m_snapshot->experiments);
        m_chart->setEmptyMessage(tr("No measured experiment on %1 yet").arg(m_selectedKernel),
            QStringLiteral("Each correct, benchmarked experiment adds a point: throughput as a "
                           "percentage of the device's roof, with the best kept so far as a line."));
    } else {
        m_steering->clearKernel();
        m_chartModel->clear();
        m_chart->setEmptyMessage(tr("No kernel selected"),
            QStringLiteral(
                "Select a kernel in the table to chart its experiments against the device's peak."));
    }
}

void RunWorkspace::experimentSelectionChanged()
{
    const QModelIndex current = m_commitView->selectionModel()->currentIndex();
    const int id = current.isValid() ? current.data(ExperimentModel::IdRole).toInt() : 0;
    const int row = m_experimentModel->rowOfId(id);
    m_chart->setSelectedExperiment(row < 0 ? 0 : id);
    if (row < 0) {
        // The selected commit left the list (another kernel's filter, a new run): its diff must not
        // stay on screen as if it belonged to the new selection, nor arrive later if still loading.
        if (m_selectedExperiment != 0)
            m_details->showNoSelection();
        m_selectedExperiment = 0;
        m_steering->clearExperiment();
        return;
    }
    const Experiment &e = m_experimentModel->rowAt(row);
    const KernelRecord *k = m_snapshot ? m_snapshot->kernel(e.kernel) : nullptr;
    m_steering->setExperiment(e, k && !e.commit.isEmpty() && k->head == e.commit);
    if (id == m_selectedExperiment)
        return; // a live update of the same commit: the diff is immutable
    m_selectedExperiment = id;
    if (m_snapshot)
        m_details->showExperiment(*m_snapshot, e);
}

bool RunWorkspace::focusNextPrevChild(bool next)
{
    // Tab walks what a review reads, in order: kernel table → commit list → diff (and Shift+Tab back);
    // elsewhere Qt's chain. Done here rather than with setTabOrder, which the chart and the tab widgets
    // between them on screen undid (the views forward Tab to their parents, tabKeyNavigation off).
    const QWidget *focus = QApplication::focusWidget();
    auto holds = [focus](const QWidget *w) { return focus && (focus == w || w->isAncestorOf(focus)); };
    QWidget *diff = m_details->diffView();
    QWidget *target = nullptr;
    if (holds(m_kernelView))
        target = next ? m_commitView : nullptr;
    else if (holds(m_commitView))
        target = next ? diff : static_cast<QWidget *>(m_kernelView);
    else if (holds(diff))
        target = next ? nullptr : m_commitView;
    QWidget *taker = target;
    while (taker && taker->focusProxy())
        taker = taker->focusProxy();
    if (taker && taker->isVisible() && taker->isEnabled()) {
        taker->setFocus(next ? Qt::TabFocusReason : Qt::BacktabFocusReason);
        return true;
    }
    return QWidget::focusNextPrevChild(next);
}

void RunWorkspace::setBlobReader(BlobReader reader)
{
    m_details->setBlobReader(std::move(reader));
}

void RunWorkspace::compareExperiments(const Experiment &older, const Experiment &newer)
{
    if (m_snapshot && m_details->compare(*m_snapshot, older, newer))
        m_selectedExperiment = -1; // a single selection afterwards loads its own diff again
}

void RunWorkspace::compareChosen()
{
    // Two experiments chosen in the commit list (Ctrl+click): the older against the newer.
    const QModelIndexList rows = m_commitView->selectionModel()->selectedRows();
    if (rows.size() != 2)
        return;
    const int a = m_experimentModel->rowOfId(rows.at(0).data(ExperimentModel::IdRole).toInt());
    const int b = m_experimentModel->rowOfId(rows.at(1).data(ExperimentModel::IdRole).toInt());
    if (a < 0 || b < 0)
        return;
    const Experiment &x = m_experimentModel->rowAt(a);
    const Experiment &y = m_experimentModel->rowAt(b);
    if (x.id < y.id)
        compareExperiments(x, y);
    else
        compareExperiments(y, x);
}

bool RunWorkspace::compareBaselineWithBest()
{
    if (!m_snapshot || m_selectedKernel.isEmpty())
        return false;
    const KernelRecord *k = m_snapshot->kernel(m_selectedKernel);
    const Experiment *best = k ? m_snapshot->experiment(k->headExperiment) : nullptr;
    const Experiment *baseline = nullptr;
    for (const Experiment &e : m_snapshot->experiments)
        if (e.kernel == m_selectedKernel && e.status == ExperimentStatus::Baseline)
            baseline = &e;
    if (!best || !baseline || best->id == baseline->id) {
        m_details->diffView()->showMessage(tr("Nothing to compare"),
            tr("%1 has kept nothing yet: its best is its baseline.").arg(m_selectedKernel));
        return false;
    }
    compareExperiments(*baseline, *best);
    return true;
}

QByteArray RunWorkspace::saveState() const
{
    QByteArray state;
    QDataStream out(&state, QIODevice::WriteOnly);
    out << kStateVersion << m_vertical->saveState() << m_top->saveState() << m_bottom->saveState()
        << m_kernelView->horizontalHeader()->saveState() << m_commitView->horizontalHeader()->saveState();
    return state;
}

void RunWorkspace::restoreState(const QByteArray &state)
{
    QDataStream in(state);
    quint32 version = 0;
    QByteArray vertical, top, bottom, kernelHeader, commitHeader;
    in >> version >> vertical >> top >> bottom >> kernelHeader >> commitHeader;
    if (version < 1 || version > kStateVersion || in.status() != QDataStream::Ok)
        return;
    m_vertical->restoreState(vertical);
    m_top->restoreState(top);
    m_bottom->restoreState(bottom);
    // A header keeps its widths and order by column number: one saved before the kernel table's
    // columns moved (version 1) would put State's width on Op, and so on. The splitters still fit.
    if (version != kStateVersion)
        return;
    m_headersRestored = m_kernelView->horizontalHeader()->restoreState(kernelHeader)
        && m_commitView->horizontalHeader()->restoreState(commitHeader);
}

bool RunWorkspace::selectExperiment(int id)
{
    const int row = m_experimentModel->rowOfId(id);
    if (!m_snapshot || row < 0)
        return false;
    const QString key = m_experimentModel->rowAt(row).kernel;
    const QVector<KernelRow> &kernels = m_kernelModel->rows();
    int kernelRow = -1;
    for (int i = 0; i < kernels.size() && kernelRow < 0; ++i)
        if (kernels[i].key == key)
            kernelRow = i;
    if (kernelRow < 0)
        return false;
    QModelIndex k = m_kernelProxy->mapFromSource(m_kernelModel->index(kernelRow, 0));
    if (!k.isValid()) { // hidden by the search box: the experiment matters more than the filter
        m_search->clear();
        m_kernelProxy->applySearchNow();
        k = m_kernelProxy->mapFromSource(m_kernelModel->index(kernelRow, 0));
    }
    m_kernelView->setCurrentIndex(k);
    m_kernelView->scrollTo(k);
    const QModelIndex e = m_experimentProxy->mapFromSource(m_experimentModel->index(row, 0));
    if (!e.isValid())
        return false;
    m_commitView->setCurrentIndex(e);
    m_commitView->scrollTo(e);
    return true;
}

bool RunWorkspace::selectNextPending()
{
    if (!m_snapshot)
        return false;
    int first = 0, next = 0;
    for (const Experiment &e : m_snapshot->experiments) {
        if (e.status != ExperimentStatus::Pending)
            continue;
        if (first == 0)
            first = e.id;
        if (next == 0 && e.id > m_selectedExperiment)
            next = e.id;
    }
    const int id = next ? next : first;
    return id != 0 && selectExperiment(id);
}

} // namespace ak
