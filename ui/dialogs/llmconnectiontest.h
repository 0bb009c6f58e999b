#pragma once

#include "agents/agentconfig.h"
#include "llm/llmprobe.h"

#include <QWidget>

#include <functional>

class QLabel;
class QPushButton;

namespace ak {

// The agent dialog's "Test Connection": one small request to the LLM server the fields describe
// (LlmProbe, the same check as `autokernel-cli llm-check`), run off the GUI thread; the verdict,
// what the server said about itself (models, context length) and the warnings are shown below the
// button. The key, when stored rather than in the environment, travels in memory only.
class LlmConnectionTest : public QWidget
{
    Q_OBJECT
public:
    // `source` gives the agent and the key as the dialog's fields stand when the button is pressed.
    using Source = std::function<std::pair<AgentConfig, QString>()>;
    explicit LlmConnectionTest(Source source, QWidget *parent = nullptr);

    void start();
    bool running() const { return m_running; }
    QString resultText() const;

Q_SIGNALS:
    void finished(const ak::LlmCheck &check);

private:
    void show(const LlmCheck &check);

    Source m_source;
    QPushButton *m_button;
    QLabel *m_result;
    bool m_running = false;
};

} // namespace ak
