#include "modelview.h"

#include "dialogs/verifyoptionsdialog.h"
#include "jsonfield.h"
#include "models/kerneltablemodel.h"
#include "numberformat.h"
#include "widgets/emptystate.h"
#include "widgets/errortint.h"
#include "widgets/modeleffectchart.h"
#include "widgets/wrappedlabel.h"

#include <QAction>
#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QProgressBar>
#include <QScrollArea>
#include <QSettings>
#include <QStackedWidget>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace ak {

namespace {

const char *const TimingNames[] = { "eager", "eager + ours", "compile", "compile + ours" };

QLabel *bigNumber(QWidget *parent, const QString &objectName)
{
    auto *label = new QLabel(notMeasured(), parent);
    label->setObjectName(objectName);
    QFont f = label->font();
    f.setPointSizeF(f.pointSizeF() * 1.8);
    f.setBold(true);
    label->setFont(f);
    return label;
}

QString seconds(double s)
{
    if (std::isnan(s))
        return notMeasured();
    return s >= 90
        ? QCoreApplication::translate("ak::ModelView", "%1 min %2 s").arg(int(s) / 60).arg(int(s) % 60)
        : QCoreApplication::translate("ak::ModelView", "%1 s").arg(s, 0, 'f', 1);
}

QString tolerances(double x)
{
    return std::isnan(x) ? notMeasured() : QString::number(x, 'g', 3);
}

// The mode the set was chosen in, and where inductor's own code beats ours (#40: "say where compile
// wins"), from each kernel's leave-one-out saving under compile.
QString modeLine(const ModelVerification &v)
{
    const auto tr = [](const char *text) { return QCoreApplication::translate("ak::ModelView", text); };
    QString line = v.mode == QLatin1String("compile")
        ? tr("Final set chosen under torch.compile (mode compile).")
        : tr("Final set chosen in eager mode.");
    QStringList wins;
    for (const KernelVerification &k : v.kernels)
        if (k.compileWins)
            wins << QStringLiteral("%1 (%2 us)").arg(k.kernel).arg(k.savedCompileUs, 0, 'f', 1);
    if (!wins.isEmpty())
        line += QLatin1Char(' ') + tr("torch.compile's own code is faster at the sites of: ")
            + wins.join(QStringLiteral(", "));
    return line;
}

} // namespace

ModelView::ModelView(QWidget *parent)
    : QWidget(parent)
    , m_jobs(new ModelJobs(this))
    , m_verifyAction(new QAction(tr("&Verify"), this))
    , m_cancelAction(new QAction(tr("&Cancel Verify"), this))
    , m_exportAction(new QAction(tr("&Export…"), this))
    , m_verifyAtEndAction(new QAction(tr("Verify When the &Loop Ends"), this))
    , m_verifyWithOptionsAction(new QAction(tr("Verify With &Options…"), this))
    , m_progress(new QProgressBar(this))
    , m_status(wrappedLabel(QString(), this, QStringLiteral("ModelStatus")))
    , m_stack(new QStackedWidget(this))
    , m_empty(new EmptyState(m_stack))
{
    setObjectName(QStringLiteral("ModelView"));
    setUpActions();
    connectJobs();
    QHBoxLayout *buttons = createButtons();
    QWidget *content = createContent();

    auto *scroll = new QScrollArea(m_stack);
    scroll->setWidget(content);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    m_stack->addWidget(m_empty);
    m_stack->addWidget(scroll);

    auto *root = new QVBoxLayout(this);
    root->addLayout(buttons);
    root->addWidget(m_progress);
    root->addWidget(m_status);
    root->addWidget(m_stack, 1);
    setSnapshot(nullptr);
}

// The actions' object names, tooltips and slots; Verify When the Loop Ends remembers its state.
void ModelView::setUpActions()
{
    m_verifyAction->setObjectName(QStringLiteral("VerifyAction"));
    m_verifyAction->setToolTip(
        QStringLiteral("Put the kept kernels into the model at their call sites: parity on every "
                       "output, in-model effect of each, the four timings (autokernel-cli verify)"));
    m_cancelAction->setObjectName(QStringLiteral("CancelVerifyAction"));
    m_cancelAction->setToolTip(tr("Stop the running verification; nothing is recorded"));
    m_exportAction->setObjectName(QStringLiteral("ExportAction"));
    m_verifyAtEndAction->setObjectName(QStringLiteral("VerifyAtEndAction"));
    m_verifyAtEndAction->setCheckable(true);
    m_verifyAtEndAction->setChecked(QSettings().value(QStringLiteral("model/verifyAtEnd"), false).toBool());
    m_verifyAtEndAction->setToolTip(
        QStringLiteral("When a loop started in this window finishes on its own (every kernel "
                       "done, budget spent), verify the kept kernels inside the model — "
                       "autokernel-cli run --verify-at-end. Not after Stop."));
    connect(m_verifyAtEndAction, &QAction::toggled, this,
        [](bool on) { QSettings().setValue(QStringLiteral("model/verifyAtEnd"), on); });
    connect(m_verifyAction, &QAction::triggered, this, qOverload<>(&ModelView::verify));
    m_verifyWithOptionsAction->setObjectName(QStringLiteral("VerifyWithOptionsAction"));
    m_verifyWithOptionsAction->setToolTip(
        QStringLiteral("Choose the kernels, device, seeds, rounds, and whether to time "
                       "torch.compile, then verify"));
    connect(m_verifyWithOptionsAction, &QAction::triggered, this, &ModelView::chooseVerifyOptions);
    connect(m_cancelAction, &QAction::triggered, this, &ModelView::cancelVerify);
    connect(m_exportAction, &QAction::triggered, this, &ModelView::chooseExportDirectory);
}

void ModelView::connectJobs()
{
    // Queued: the progress is emitted on the verify's pool thread.
    connect(m_jobs, &ModelJobs::verifyProgress, this, &ModelView::verifyProgress, Qt::QueuedConnection);
    connect(m_jobs, &ModelJobs::verifyFinished, this, &ModelView::verifyFinished);
    connect(m_jobs, &ModelJobs::exportFinished, this, &ModelView::exportFinished);
}

// Verify, Cancel Verify and Export as buttons over the view; the progress and status start hidden.
QHBoxLayout *ModelView::createButtons()
{
    auto *buttons = new QHBoxLayout;
    for (QAction *a : { m_verifyAction, m_cancelAction, m_exportAction }) {
        auto *b = new QToolButton(this);
        b->setDefaultAction(a);
        b->setToolButtonStyle(Qt::ToolButtonTextOnly);
        buttons->addWidget(b);
    }
    buttons->addStretch();
    m_progress->setObjectName(QStringLiteral("ModelProgress"));
    m_empty->setObjectName(QStringLiteral("ModelEmptyState"));
    m_progress->setRange(0, 100);
    m_progress->hide();
    m_status->hide();
    return buttons;
}

// The verification's page: the two big numbers, the four timings, the notes, the effect chart and the
// kernels left out of the final set.
QWidget *ModelView::createContent()
{
    auto *content = new QWidget;
    auto *column = new QVBoxLayout(content);
    auto *headline = new QGridLayout;
    m_measured = bigNumber(content, QStringLiteral("MeasuredSpeedup"));
    m_projected = bigNumber(content, QStringLiteral("ProjectedSpeedup"));
    m_measured->setToolTip(tr("Measured: eager + the final set vs eager, one process, alternating rounds"));
    m_projected->setToolTip(
        QStringLiteral("Projected (Amdahl): each kernel's share of the profile and its best kept "
                       "speedup in isolation; what the table promised"));
    headline->addWidget(m_measured, 0, 0);
    headline->addWidget(m_projected, 0, 1);
    headline->addWidget(new QLabel(tr("measured in the model"), content), 1, 0);
    headline->addWidget(new QLabel(tr("projected from the kernels"), content), 1, 1);
    column->addLayout(headline);

    m_timings = new QGridLayout;
    const QStringList heads { tr("per forward"), tr("vs eager"), tr("vs compile") };
    for (int c = 0; c < 3; ++c)
        m_timings->addWidget(
            new QLabel(QStringLiteral("<b>%1</b>").arg(heads[c]), content), 0, c + 1, Qt::AlignRight);
    for (int r = 0; r < 4; ++r) {
        m_timings->addWidget(new QLabel(QString::fromUtf8(TimingNames[r]), content), r + 1, 0);
        for (int c = 0; c < 3; ++c)
            m_timings->addWidget(new QLabel(content), r + 1, c + 1, Qt::AlignRight);
    }
    column->addLayout(m_timings);
    m_compileTime = wrappedLabel(QString(), content, QStringLiteral("CompileSeconds"));
    m_parity = wrappedLabel(QString(), content, QStringLiteral("Parity"));
    m_finalSet = wrappedLabel(QString(), content, QStringLiteral("FinalSet"));
    m_environment = wrappedLabel(QString(), content, QStringLiteral("Environment"));
    for (QLabel *l : { m_compileTime, m_parity, m_finalSet, m_environment })
        column->addWidget(l);
    m_chart = new ModelEffectChart(content);
    m_chart->setObjectName(QStringLiteral("ModelEffectChart"));
    m_chart->setMinimumHeight(220);
    column->addWidget(m_chart, 1);
    column->addWidget(new QLabel(tr("<b>Not in the final set</b>"), content));
    m_leftOut = new QTableWidget(0, 3, content);
    m_leftOut->setObjectName(QStringLiteral("LeftOutTable"));
    m_leftOut->setHorizontalHeaderLabels({ tr("Kernel"), tr("In model"), tr("Why") });
    m_leftOut->horizontalHeader()->setStretchLastSection(true);
    m_leftOut->verticalHeader()->hide();
    m_leftOut->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_leftOut->setWordWrap(true);
    m_leftOut->setMaximumHeight(160);
    column->addWidget(m_leftOut);
    return content;
}

ModelView::~ModelView() = default;

QLabel *ModelView::timingLabel(int row, int column) const
{
    QLayoutItem *item = m_timings->itemAtPosition(row + 1, column + 1);
    return item ? qobject_cast<QLabel *>(item->widget()) : nullptr;
}

bool ModelView::isShowingVerification() const
{
    return m_stack->currentWidget() != m_empty;
}

double ModelView::projectedSpeedup(const RunSnapshot &snapshot)
{
    return snapshot.projectedSpeedup();
}

void ModelView::setSnapshot(const RunSnapshotPtr &snapshot)
{
    const bool otherRun = !snapshot || !m_snapshot || snapshot->runDir != m_snapshot->runDir;
    if (otherRun && !m_jobs->isVerifying() && !m_jobs->isExporting())
        setStatus(QString(), false); // an outcome of another run's job does not belong here
    m_snapshot = snapshot;
    if (!snapshot) {
        m_empty->setMessage(tr("No run open"), tr("Open a run to verify its kernels inside the model."));
        m_empty->setAction(nullptr);
        m_stack->setCurrentWidget(m_empty);
    } else if (!snapshot->verification) {
        m_empty->setMessage(tr("Not verified yet — Verify measures the kernels inside the model"),
            QStringLiteral("It puts the kept kernels back into the model at their call sites, checks every "
                           "output on fresh seeded inputs, measures each kernel's effect in the model and "
                           "times eager and torch.compile with and without them. Only the kernels that "
                           "win there form the final set that Export packages."));
        m_empty->setAction(m_verifyAction);
        m_stack->setCurrentWidget(m_empty);
        m_chart->clear();
    } else {
        showVerification(*snapshot, *snapshot->verification);
        m_stack->setCurrentIndex(1);
    }
    updateActions();
}

void ModelView::showVerification(const RunSnapshot &snapshot, const ModelVerification &v)
{
    m_measured->setText(formatRatio(v.modelSpeedup));
    const double projected = projectedSpeedup(snapshot);
    m_projected->setText(std::isinf(projected) ? notMeasured() : formatRatio(projected));
    showTimings(v);
    const bool anyCompile = !std::isnan(v.compileSeconds) || !std::isnan(v.compileOursSeconds);
    m_compileTime->setText(anyCompile
            ? tr("torch.compile time: %1 (original), %2 (with ours); not in the timings")
                  .arg(seconds(v.compileSeconds), seconds(v.compileOursSeconds))
            : tr("torch.compile time: not measured"));
    if (!v.compileAdvice.isEmpty())
        m_compileTime->setText(m_compileTime->text() + QStringLiteral("\n")
            + v.compileAdvice.left(1).toUpper() + v.compileAdvice.mid(1));
    m_compileTime->setText(m_compileTime->text() + QStringLiteral("\n") + modeLine(v));
    QStringList seeds;
    for (qint64 s : v.seeds)
        seeds << QString::number(s);
    m_parity->setText(
        tr("Parity: %1 — worst %2 tolerances from the truth (eager %3); seeds %4%5")
            .arg(v.parityOk ? QStringLiteral("ok") : tr("FAILED"), tolerances(v.parityError),
                tolerances(v.eagerError), seeds.isEmpty() ? notMeasured() : seeds.join(QStringLiteral(", ")),
                v.parityNote.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(v.parityNote)));
    ErrorTint::apply(m_parity, !v.parityOk);
    m_finalSet->setText(
        tr("Final set: %1 of %2 kernels%3")
            .arg(v.finalSet.size())
            .arg(v.kernels.size())
            .arg(v.finalSet.isEmpty() ? QString()
                                      : QStringLiteral(" (%1)").arg(v.finalSet.join(QStringLiteral(", ")))));
    QStringList where { v.deviceName.isEmpty() ? v.device : v.deviceName, v.dtype,
        tr("torch %1").arg(v.torch.isEmpty() ? notMeasured() : v.torch),
        v.triton.isEmpty() ? tr("no Triton") : tr("Triton %1").arg(v.triton) };
    if (!v.python.isEmpty())
        where << tr("Python %1").arg(v.python);
    where.removeAll(QString());
    m_environment->setText(
        tr("%1\nVerified %2, took %3")
            .arg(where.join(QStringLiteral(" · ")),
                v.when.isValid() ? v.when.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm"))
                                 : notMeasured(),
                seconds(v.seconds)));
    m_chart->setVerification(v);
    showLeftOut(v);
}

void ModelView::showTimings(const ModelVerification &v)
{
    const ModelTiming *timings[] = { &v.eager, &v.eagerOurs, &v.compile, &v.compileOurs };
    for (int r = 0; r < 4; ++r) {
        const ModelTiming &t = *timings[r];
        const QString why = t.error.isEmpty() ? tr("not measured (torch.compile unavailable or switched off)")
                                              : tr("not measured: %1").arg(t.error);
        timingLabel(r, 0)->setText(
            t.measured ? tr("%1 ms").arg(t.medianUs / 1000.0, 0, 'f', 2) : tr("not measured"));
        timingLabel(r, 0)->setToolTip(
            t.measured ? tr("median %1 µs per forward").arg(t.medianUs, 0, 'f', 1) : why);
        timingLabel(r, 1)->setText(t.measured ? formatRatio(t.speedupVsEager) : QString());
        timingLabel(r, 2)->setText(r == 3 && t.measured ? formatRatio(t.speedupVsCompile) : QString());
    }
}

void ModelView::showLeftOut(const ModelVerification &v)
{
    m_leftOut->setRowCount(0);
    for (const KernelVerification &k : v.kernels) {
        if (k.inFinalSet)
            continue;
        const int row = m_leftOut->rowCount();
        m_leftOut->insertRow(row);
        const QString why = k.whyNot.isEmpty() ? v.parityNote : k.whyNot;
        const QString items[] = { k.kernel, inModelText(k), why };
        for (int c = 0; c < 3; ++c) {
            auto *item = new QTableWidgetItem(items[c]);
            item->setToolTip(why);
            m_leftOut->setItem(row, c, item);
        }
    }
    m_leftOut->resizeColumnToContents(0);
    m_leftOut->resizeColumnToContents(1);
}

bool ModelView::verify()
{
    return verify(VerifyOptions());
}

void ModelView::chooseVerifyOptions()
{
    if (!m_snapshot || m_jobs->isVerifying())
        return;
    auto *dialog = new VerifyOptionsDialog(this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setRun(*m_snapshot);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { verify(dialog->options()); });
    dialog->open();
}

bool ModelView::verify(VerifyOptions options)
{
    if (!m_snapshot || m_jobs->isVerifying())
        return false;
    options.runDir = m_snapshot->runDir;
    if (!m_jobs->verify(options))
        return false;
    m_verifyingRun = options.runDir;
    m_progress->setRange(0, 0); // busy until the worker says how far it is
    m_progress->show();
    setStatus(QStringLiteral("Verifying %1…").arg(QDir::toNativeSeparators(options.runDir)), false);
    Q_EMIT info(tr("verify %1: started").arg(options.runDir));
    updateActions();
    return true;
}

bool ModelView::loopEnded(const QString &runDir, bool onItsOwn)
{
    if (!m_verifyAtEndAction->isChecked() || !onItsOwn)
        return false;
    if (!m_snapshot || QDir(m_snapshot->runDir) != QDir(runDir)) {
        Q_EMIT info(tr("verify %1: not started at the loop's end: another run is open").arg(runDir));
        return false;
    }
    if (m_jobs->isVerifying()) {
        Q_EMIT info(tr("verify %1: not started at the loop's end: a verify is running").arg(runDir));
        return false;
    }
    Q_EMIT info(tr("the loop ended: verifying the kept kernels inside the model"));
    return verify();
}

void ModelView::cancelVerify()
{
    if (!m_jobs->isVerifying())
        return;
    m_jobs->cancelVerify();
    setStatus(tr("Cancelling the verification…"), false);
    updateActions();
}

void ModelView::verifyProgress(const QString &message, double fraction)
{
    if (!m_jobs->isVerifying())
        return; // a late event from a verify that already ended
    if (fraction >= 0) {
        m_progress->setRange(0, 100);
        m_progress->setValue(int(std::lround(std::min(1.0, fraction) * 100)));
    }
    m_progress->setFormat(tr("%1 — %p%").arg(message));
    setStatus(tr("Verifying: %1").arg(message), false);
}

void ModelView::verifyFinished(const VerifyOutcome &outcome)
{
    const QString run = m_verifyingRun;
    m_verifyingRun.clear();
    m_progress->hide();
    updateActions();
    if (outcome.cancelled) {
        setStatus(tr("Verification cancelled; nothing was recorded."), false);
        Q_EMIT info(tr("verify %1: cancelled, nothing recorded").arg(run));
        return;
    }
    if (!outcome.ok) {
        setStatus(tr("Verify failed: %1").arg(outcome.error), true);
        Q_EMIT failed(tr("verify %1: %2").arg(run, outcome.error));
        return;
    }
    const double speedup = jsonfield::number(outcome.verification, "model_speedup", std::nan(""));
    const QString text = tr("verify %1: model %2 (eager + the final set vs eager); verification.json %3")
                             .arg(run, formatRatio(speedup), outcome.recorded);
    setStatus(QString(), false);
    Q_EMIT info(text);
    Q_EMIT verified(run);
}

void ModelView::chooseExportDirectory()
{
    if (!m_snapshot || !m_snapshot->verification)
        return;
    const QString dir = QFileDialog::getExistingDirectory(
        this, QStringLiteral("Export the Verified Kernels To"), QDir::homePath());
    if (!dir.isEmpty())
        exportTo(dir);
}

bool ModelView::exportTo(const QString &dir)
{
    if (!m_snapshot || !m_snapshot->verification)
        return false;
    ExportOptions options;
    options.runDir = m_snapshot->runDir;
    options.outDir = dir;
    if (!m_jobs->exportPackage(options))
        return false;
    setStatus(QStringLiteral("Exporting to %1…").arg(QDir::toNativeSeparators(dir)), false);
    updateActions();
    return true;
}

void ModelView::exportFinished(const ExportOutcome &outcome)
{
    updateActions();
    if (!outcome.ok) {
        setStatus(tr("Export failed: %1").arg(outcome.error), true);
        Q_EMIT failed(tr("export: %1").arg(outcome.error));
        return;
    }
    setStatus(tr("Exported %1 kernel(s) to %2")
                  .arg(outcome.kernels)
                  .arg(QDir::toNativeSeparators(outcome.packageDir)),
        false);
    Q_EMIT info(QStringLiteral(
        "export: package %1 with %2 kernel(s), measured %3 over eager; import it and call apply(model)")
                    .arg(outcome.packageDir)
                    .arg(outcome.kernels)
                    .arg(formatRatio(outcome.modelSpeedup)));
}

void ModelView::setStatus(const QString &text, bool error)
{
    m_status->setText(text);
    ErrorTint::apply(m_status, error);
    m_status->setVisible(!text.isEmpty());
}

void ModelView::updateActions()
{
    const bool verifying = m_jobs->isVerifying();
    m_verifyAction->setEnabled(m_snapshot && !verifying);
    m_verifyWithOptionsAction->setEnabled(m_snapshot && !verifying);
    m_cancelAction->setEnabled(verifying);
    const bool canExport = m_snapshot && m_snapshot->verification && !m_jobs->isExporting();
    m_exportAction->setEnabled(canExport);
    m_exportAction->setToolTip(canExport
            ? QStringLiteral("Write the verified final set as a Python package with apply(model) "
                             "and restore(model) (autokernel-cli export)")
            : m_jobs->isExporting() ? tr("An export is running")
                                    : tr("Export needs a verification: Verify first"));
}

} // namespace ak
