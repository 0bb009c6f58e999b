#pragma once

#include "services/examplerun.h"
#include "widgets/logview.h"

#include <QObject>
#include <QString>

#include <optional>

class QAction;
class QWidget;

namespace ak {

// Help ▸ Open Example Run and File ▸ New Run…: finds or creates a run (ExampleRun, in the background)
// and asks for it to be opened once it exists. One creation at a time: asking for another cancels the
// earlier one. Progress and outcome leave through signals, so that the window alone decides where
// messages go (its log, status bar and empty state).
class ExampleRunStarter : public QObject
{
    Q_OBJECT
public:
    explicit ExampleRunStarter(QWidget *parent); // parent: the window (NewRunDialog's parent too)

    // File ▸ Cancel Profiling: enabled while a creation runs.
    QAction *cancelAction() const { return m_cancel; }

    // A bundled example or recording by name; an unknown name fails at once (failed).
    void open(const QString &name);
    void open(const ExampleRun::Options &options);
    // NewRunDialog, then open() with what was chosen.
    void newRun();
    // The window opened a run: a creation finishing after this says it is ready but does not replace
    // what the user chose meanwhile.
    void runOpened() { ++m_opens; }

    // What the window suggests while no run is open: ways to make or open one.
    static QString noRunHint();

Q_SIGNALS:
    void message(ak::LogView::Level level, const QString &text); // for the log
    void statusMessage(const QString &text, int timeoutMs); // 0: until replaced
    // For the empty state: what is being prepared, or why it could not be; only while no run shows.
    void explanation(const QString &title, const QString &text);
    void creatingChanged(bool creating);
    void ready(const QString &runDir); // open it
    void failed(const QString &name, const QString &error);

private:
    void progress(const ExampleRun::Options &options, const QString &message);
    void finish(const ExampleRun::Options &options, const ExampleRun::Result &result, quint64 opensAtStart);

    QWidget *m_parent;
    QAction *m_cancel;
    ExampleRun *m_job = nullptr; // the example being found or created
    quint64 m_opens = 0; // runOpened calls
    // The last model-file run that failed or was cancelled: New Run offers it again.
    std::optional<ExampleRun::Options> m_failedModelRun;
};

} // namespace ak
