#pragma once

#include "runsnapshot.h"

#include <QWidget>

class QLabel;

namespace ak {

// The strip above the kernel table that says what the run amounts to at a glance: the model's
// measured speedup (verify) beside the projection, the experiments by outcome, and the loop — where
// it runs (setLoop, from the window: this window, another process, nobody), on which kernel, at what
// pace, with how much budget is left, which agent proposes and what it has spent (tokens, USD).
// Updated on every reload; numbers from RunStats, the same as the HTML report. Wraps rather than
// widening its window when the row is too short (View ▸ Presentation's large type).
class RunSummaryBar : public QWidget
{
    Q_OBJECT
public:
    explicit RunSummaryBar(QWidget *parent = nullptr);

    void setSnapshot(const RunSnapshot &run);
    // Where the loop runs, as the window knows it: "in this window", "in pid 4242", "" = no loop.
    void setLoop(const QString &where);

protected:
    void changeEvent(QEvent *event) override;

private:
    void showLoop();
    // Caps each label at its width on one line: on a short row the longest wraps (see the .cpp).
    void fitToText();

    QLabel *m_model;
    QLabel *m_counts;
    QLabel *m_loop;
    QLabel *m_recording;
    QString m_where;
    QString m_currentKernel;
    double m_perHour = 0;
    std::optional<LoopInfo> m_loopInfo; // the CLI loop's budget and agent
    qint64 m_tokens = 0; // the agent's spend over the run
    double m_cost = 0;
};

} // namespace ak
