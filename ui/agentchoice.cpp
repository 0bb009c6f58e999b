#include "agentchoice.h"

#include "dialogs/agentsettingsdialog.h"
#include "loop/localloop.h"
#include "services/loophost.h"

#include <QAction>
#include <QSettings>
#include <QWidget>

namespace ak {

AgentChoice::AgentChoice(QWidget *window, LoopHost *loops)
    : QObject(window)
    , m_window(window)
    , m_loops(loops)
    , m_action(new QAction(tr("&Agent…"), this))
{
    m_action->setObjectName(QStringLiteral("AgentAction"));
    connect(m_action, &QAction::triggered, this, &AgentChoice::editRequested);
    updateTip();
}

void AgentChoice::updateTip()
{
    QSettings store;
    AgentSettings saved;
    m_action->setToolTip(AgentSettings::load(store, &saved)
            ? tr("What Loop ▸ Start runs: %1").arg(saved.summary())
            : QStringLiteral("What Loop ▸ Start runs: each run's own agent (run.json; tune when it "
                             "has none) on its default device. Choose an LLM, a command, a replay, "
                             "devices or Python here."));
}

void AgentChoice::edit(const RunSnapshotPtr &run)
{
    if (m_dialog) {
        m_dialog->raise();
        m_dialog->activateWindow();
        return;
    }
    auto *dialog = new AgentSettingsDialog(m_window);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->prefill(run ? &run->config : nullptr);
    connect(dialog, &QDialog::accepted, this, [this, dialog] { chosen(*dialog); });
    m_dialog = dialog;
    dialog->open();
}

void AgentChoice::chosen(const AgentSettingsDialog &dialog)
{
    // The summary names the key's variable or says it is stored; it never holds the key.
    const QString what = dialog.forgotten() ? tr("each run's own agent (run.json) on its default device")
                                            : dialog.settings().summary();
    const bool running = m_loops->loop() && m_loops->loop()->state() != LoopControl::State::Stopped;
    // A loop paused by a configuration error builds its agent again on Resume: from these settings. The
    // loop runs on the host's run (the one shown), so its run.json is the one to read.
    if (auto *local = qobject_cast<LocalLoop *>(m_loops->loop()); local && running) {
        const LoopOptions o
            = dialog.forgotten() ? LoopOptions() : dialog.settings().loopOptions(m_loops->runDir());
        local->setAgent(o.agent, o.agentInputs, o.overrideAgent);
    }
    Q_EMIT message(LogView::Level::Info,
        tr("Loop ▸ Start will use %1%2")
            .arg(what,
                running ? tr(" (the running loop keeps its agent, unless a configuration error paused it: "
                             "then Resume uses this one)")
                        : QString()));
    Q_EMIT statusMessage(tr("Agent: %1").arg(what), 5000);
    updateTip();
}

} // namespace ak
