#include "widgets/presentationview.h"

#include "models/throughputchartmodel.h"
#include "numberformat.h"
#include "runheadline.h"
#include "runstats.h"
#include "services/backgroundjob.h"
#include "widgets/diffview.h"
#include "widgets/modelspeedupchart.h"
#include "widgets/runsummarybar.h"
#include "widgets/throughputchart.h"

#include <QChart>
#include <QCloseEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QKeyEvent>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include <cmath>

namespace ak {

namespace {

constexpr double kTypeScale = 1.6; // a projector at the back of a room

// The newest experiment that moved a kernel forward: kept (or waiting for review as a keep).
const Experiment *latestImprovement(const RunSnapshot &run)
{
    for (auto it = run.experiments.crbegin(); it != run.experiments.crend(); ++it)
        if ((it->status == ExperimentStatus::Kept || it->status == ExperimentStatus::Pending)
            && !it->commit.isEmpty())
            return &*it;
    return nullptr;
}

} // namespace

PresentationView::PresentationView(QWidget *parent)
    : QWidget(parent, Qt::Window)
    , m_title(new QLabel(this))
    , m_headline(new QLabel(this))
    , m_headlineNote(new QLabel(this))
    , m_summary(new RunSummaryBar(this))
    , m_modelChart(new ModelSpeedupChart(this))
    , m_kernelModel(new ThroughputChartModel(this))
    , m_kernelChart(new ThroughputChart(m_kernelModel, this))
    , m_diffTitle(new QLabel(this))
    , m_diff(new DiffView(this))
{
    setObjectName(QStringLiteral("PresentationView"));
    setWindowTitle(tr("Presentation — AutoKernel Studio"));
    QFont large = font();
    large.setPointSizeF(large.pointSizeF() * kTypeScale);
    setFont(large);
    QFont headline = large;
    headline.setPointSizeF(large.pointSizeF() * 2.4);
    headline.setBold(true);
    m_headline->setFont(headline);
    m_headline->setObjectName(QStringLiteral("PresentationHeadline"));
    m_headlineNote->setObjectName(QStringLiteral("PresentationHeadlineNote"));
    m_headlineNote->setWordWrap(true);
    QFont title = large;
    title.setBold(true);
    m_title->setFont(title);
    m_diffTitle->setObjectName(QStringLiteral("PresentationDiffTitle"));
    m_diffTitle->setWordWrap(true);

    auto *head = new QHBoxLayout;
    auto *names = new QVBoxLayout;
    names->addWidget(m_title);
    names->addWidget(m_headlineNote);
    names->addStretch(1);
    head->addWidget(m_headline);
    head->addSpacing(24);
    head->addLayout(names, 1);

    auto *charts = new QSplitter(Qt::Horizontal, this);
    charts->addWidget(m_modelChart);
    charts->addWidget(m_kernelChart);
    auto *diffPane = new QWidget(this);
    auto *diffLayout = new QVBoxLayout(diffPane);
    diffLayout->setContentsMargins(0, 0, 0, 0);
    diffLayout->addWidget(m_diffTitle);
    diffLayout->addWidget(m_diff, 1);
    auto *body = new QSplitter(Qt::Vertical, this);
    body->addWidget(charts);
    body->addWidget(diffPane);
    body->setStretchFactor(0, 2);
    body->setStretchFactor(1, 3);

    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(24, 16, 24, 16);
    layout->addLayout(head);
    layout->addWidget(m_summary);
    layout->addWidget(body, 1);
    auto *hint = new QLabel(tr("Esc or F5: back to the window"), this);
    hint->setEnabled(false);
    layout->addWidget(hint, 0, Qt::AlignRight);

    m_blobReader = [](const QString &, const QString &, const QString &, QString *error) {
        *error = tr("no git reader configured");
        return QByteArray();
    };
    m_diff->showMessage(tr("Nothing kept yet"), tr("The latest kept change appears here."));
}

PresentationView::~PresentationView() = default;

QString PresentationView::headline() const
{
    return m_headline->text();
}

void PresentationView::setLoop(const QString &where)
{
    m_summary->setLoop(where);
}

void PresentationView::setSnapshot(const RunSnapshotPtr &snapshot)
{
    m_snapshot = snapshot;
    if (!snapshot)
        return;
    const RunSnapshot &run = *snapshot;
    const QString name = QFileInfo(run.config.model).fileName();
    m_title->setText(
        tr("%1 on %2%3")
            .arg(name.isEmpty() ? run.config.model : name,
                run.config.device.name.isEmpty() ? tr("an unrecorded device") : run.config.device.name,
                run.recording.isEmpty() ? QString()
                                        : QStringLiteral(" — ") + RunHeadline::of(run).recordingLabel()));
    // The big number is what was measured in the model; without a verification it is the two
    // projections side by side, never one figure that mixes the starters with the loop (#41).
    const RunHeadline headline = RunHeadline::of(run);
    const QString parts = tr("starters %1 · loop %2").arg(headline.startersText(), headline.loopText());
    if (headline.verified) {
        m_headline->setText(formatRatio(headline.measured));
        m_headlineNote->setText(tr("whole model, %1 · projected: %2")
                                    .arg(headline.measuredText().section(QLatin1Char(' '), 1), parts));
    } else {
        m_headline->setText(parts);
        m_headlineNote->setText(tr("projected from each kernel's share: the starters over PyTorch, the loop "
                                   "on top of them; not measured in the model yet (Model ▸ Verify)"));
    }
    m_headline->setToolTip(headline.explanation());
    m_headlineNote->setToolTip(headline.explanation());
    m_summary->setSnapshot(run);
    m_modelChart->setSnapshot(run);

    const RunStats stats = RunStats::of(run);
    QString kernel = stats.currentKernel;
    if (kernel.isEmpty() && !run.experiments.isEmpty())
        kernel = run.experiments.last().kernel;
    m_kernel = KernelRecord::keyOf(kernel);
    const KernelRecord *k = run.kernel(m_kernel);
    if (k) {
        m_kernelModel->setKernel(*k, m_kernel, run.experiments);
        m_kernelChart->chart()->setTitle(tr("%1: every experiment").arg(m_kernel));
    } else {
        m_kernelModel->clear();
        m_kernelChart->setEmptyMessage(tr("No experiment yet"), tr("Start the loop to see it work."));
    }
    showLatestChange(run);
}

void PresentationView::showLatestChange(const RunSnapshot &run)
{
    const Experiment *e = latestImprovement(run);
    if (!e) {
        m_shownExperiment = 0;
        m_diffTitle->clear();
        m_diff->showMessage(tr("Nothing kept yet"), tr("The latest kept change appears here."));
        return;
    }
    const QString key = KernelRecord::keyOf(e->kernel);
    m_diffTitle->setText(
        tr("Latest kept change: experiment %1 on %2 (%3 PyTorch's speed)%4 — %5")
            .arg(e->id)
            .arg(key, formatRatio(e->metrics.speedup),
                e->status == ExperimentStatus::Pending ? tr(" (waiting for review)") : QString(),
                e->description));
    if (e->id == m_shownExperiment)
        return; // the same commit: its diff does not change
    m_shownExperiment = e->id;
    const QString path = ExperimentDetails::kernelPyPath(&run, key);
    const quint64 generation = ++m_generation;
    runInBackground(
        this,
        [reader = m_blobReader, dir = run.runDir, commit = e->commit, parent = e->parent, path] {
            return ExperimentDetails::readTexts(reader, dir, parent, commit, path);
        },
        [this, generation, id = e->id](const ExperimentDetails::TextPair &t) {
            if (generation != m_generation)
                return;
            if (!t.error.isEmpty()) {
                m_diff->showMessage(tr("Cannot read kernel.py of experiment %1").arg(id), t.error);
                return;
            }
            m_diff->showTexts(t.oldText, t.newText, tr("before"), tr("experiment %1").arg(id));
        });
}

void PresentationView::keyPressEvent(QKeyEvent *event)
{
    if (event->key() == Qt::Key_Escape || event->key() == Qt::Key_F5) {
        close();
        return;
    }
    QWidget::keyPressEvent(event);
}

void PresentationView::closeEvent(QCloseEvent *event)
{
    QWidget::closeEvent(event);
    Q_EMIT closed();
}

} // namespace ak
