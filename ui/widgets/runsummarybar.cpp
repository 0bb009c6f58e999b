#include "widgets/runsummarybar.h"

#include "numberformat.h"
#include "runcost.h"
#include "runheadline.h"
#include "runloader.h"
#include "runstats.h"

#include <QDateTime>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>

#include <cmath>

namespace ak {

RunSummaryBar::RunSummaryBar(QWidget *parent)
    : QWidget(parent)
    , m_model(new QLabel(this))
    , m_counts(new QLabel(this))
    , m_loop(new QLabel(this))
    , m_recording(new QLabel(this))
{
    setObjectName(QStringLiteral("RunSummaryBar"));
    m_model->setObjectName(QStringLiteral("SummaryModel"));
    m_counts->setObjectName(QStringLiteral("SummaryCounts"));
    m_loop->setObjectName(QStringLiteral("SummaryLoop"));
    m_recording->setObjectName(QStringLiteral("SummaryRecording"));
    m_recording->hide();
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(2, 0, 2, 2);
    // Equal stretches, each label capped at its one-line width (fitToText): a row too short for
    // all of them leaves the shorter ones whole and wraps the longest. The trailing stretch, tiny
    // beside theirs, takes only what is left once every label is on one line.
    layout->addWidget(m_recording, 100);
    layout->addWidget(m_model, 100);
    layout->addSpacing(18);
    layout->addWidget(m_counts, 100);
    layout->addSpacing(18);
    layout->addWidget(m_loop, 100);
    layout->addStretch(1);
    for (QLabel *l : { m_model, m_counts, m_loop })
        l->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A long summary wraps instead of widening the window: in View ▸ Presentation's large type
    // "… · PyTorch wins on 9 kernels · No loop running" made a 1600 px window 1701 px wide.
    for (QLabel *l : { m_recording, m_model, m_counts, m_loop })
        l->setWordWrap(true);
    showLoop();
}

void RunSummaryBar::setSnapshot(const RunSnapshot &run)
{
    // Three parts never merged into one number (#41): the starters over PyTorch, the loop's gain on
    // top of them, and what was measured in the model (RunHeadline says what each divides by).
    const RunHeadline headline = RunHeadline::of(run);
    m_model->setText(
        tr("Starters <b>%1</b> · loop <b>%2</b> · model %3")
            .arg(headline.startersText(), headline.loopText(),
                headline.verified
                    ? QStringLiteral("<b>%1</b> %2")
                          .arg(formatRatio(headline.measured),
                              headline.measuredText().section(QLatin1Char(' '), 1).toHtmlEscaped())
                    : headline.measuredText().toHtmlEscaped()));
    m_model->setToolTip(headline.explanation());
    // A recording says so first, verified or not: its numbers are another machine's, its loop ran there.
    // Verified, the model part beside it names the date and device: the recording's own summary, which
    // says them again, goes to the tooltip (both in the label wrapped the summary to four lines at 1280 px).
    m_recording->setVisible(!run.recording.isEmpty());
    m_recording->setText(headline.verified
            ? tr("<b>%1</b> ·").arg(headline.recordingLabel().toHtmlEscaped())
            : tr("<b>%1</b> · %2 ·")
                  .arg(headline.recordingLabel().toHtmlEscaped(), run.recording.toHtmlEscaped()));
    m_recording->setToolTip(
        tr("Restored from %1, which ships with the app; View ▸ Replay Run plays it back as it happened.")
            .arg(run.recording.toHtmlEscaped()));
    const RunStats stats = RunStats::of(run);
    m_counts->setText(tr("%1 experiments: %2").arg(stats.attempts).arg(stats.countsText()));
    // What the search cost per what it found (#43 item 6): money with a price, else tokens, else time.
    const QString cost = RunCost::of(run).text();
    m_counts->setToolTip(cost.isEmpty() ? QString() : tr("Cost of the search: %1").arg(cost));
    m_currentKernel = stats.currentKernel.isEmpty() ? QString() : KernelRecord::keyOf(stats.currentKernel);
    m_perHour = stats.perHour;
    m_loopInfo = run.loop;
    m_tokens = stats.tokensIn + stats.tokensOut;
    m_cost = stats.cost;
    showLoop();
}

void RunSummaryBar::setLoop(const QString &where)
{
    m_where = where;
    showLoop();
}

void RunSummaryBar::showLoop()
{
    if (m_where.isEmpty()) {
        m_loop->setText(tr("No loop running"));
        fitToText();
        return;
    }
    QString text = tr("Loop running %1").arg(m_where);
    if (!m_currentKernel.isEmpty())
        text += tr(" · on %1").arg(m_currentKernel);
    if (std::isfinite(m_perHour))
        text += tr(" · %1 experiments/h").arg(std::lround(m_perHour));
    // The budget and the agent are known only for a loop that says so (the CLI's run.json-side file).
    if (m_loopInfo) {
        const QString left = m_loopInfo->budgetLeftText(QDateTime::currentDateTimeUtc());
        if (!left.isEmpty())
            text += QStringLiteral(" · ") + left;
        if (!m_loopInfo->agent.isEmpty())
            text += tr(" · %1 agent").arg(m_loopInfo->agent);
    }
    if (m_tokens > 0) {
        text += m_tokens >= 10000 ? tr(" · %1k tokens").arg(double(m_tokens) / 1000.0, 0, 'f', 1)
                                  : tr(" · %1 tokens").arg(m_tokens);
        if (m_cost > 0)
            text += QStringLiteral(" · $%1").arg(m_cost, 0, 'f', 2);
    }
    m_loop->setText(text);
    fitToText();
}

void RunSummaryBar::changeEvent(QEvent *event)
{
    QWidget::changeEvent(event);
    // The one-line widths are the font's: View ▸ Presentation sets its large type after making the bar.
    if (event->type() == QEvent::FontChange || event->type() == QEvent::StyleChange)
        fitToText();
}

void RunSummaryBar::fitToText()
{
    // A word-wrapped QLabel's size hint is a guessed narrow block (QTextDocument::adjustSize), and a
    // label given more than its text needs would leave a gap: each is held to its width on one line.
    for (QLabel *l : { m_recording, m_model, m_counts, m_loop }) {
        l->setWordWrap(false);
        const int oneLine = l->sizeHint().width();
        l->setWordWrap(true);
        l->setMaximumWidth(oneLine);
    }
}

} // namespace ak
