#include "dialogs/llmconnectiontest.h"

#include "llm/llmagent.h"
#include "services/backgroundjob.h"
#include "widgets/errortint.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace ak {

LlmConnectionTest::LlmConnectionTest(Source source, QWidget *parent)
    : QWidget(parent)
    , m_source(std::move(source))
    , m_button(new QPushButton(tr("Test Connection"), this))
    , m_result(new QLabel(this))
{
    m_button->setObjectName(QStringLiteral("testConnection"));
    m_button->setToolTip(
        tr("Send one small request to the server with these settings and show what it says about "
           "itself (models, context length): a wrong key, model or URL shows now, not overnight."));
    m_result->setObjectName(QStringLiteral("testResult"));
    m_result->setWordWrap(true);
    m_result->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_result->hide();
    auto *row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_button);
    row->addStretch(1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(m_result);
    connect(m_button, &QPushButton::clicked, this, &LlmConnectionTest::start);
}

QString LlmConnectionTest::resultText() const
{
    return m_result->text();
}

void LlmConnectionTest::start()
{
    if (m_running)
        return;
    auto [config, key] = m_source();
    config.kind = AgentConfig::Kind::Llm;
    LlmAgent agent(config, key);
    m_result->show();
    if (const QString why = agent.configurationError(); !why.isEmpty()) {
        LlmCheck check;
        check.verdict = why;
        show(check);
        return;
    }
    m_running = true;
    m_button->setEnabled(false);
    const QString server = config.baseUrl.trimmed().isEmpty() ? tr("the %1 endpoint").arg(config.llmProtocol)
                                                              : config.baseUrl.trimmed();
    m_result->setText(tr("Asking %1 for a short reply from %2…").arg(server, config.model));
    // The probe blocks on its own event loop: never on the GUI thread.
    runInBackground(
        this, [request = agent.requestDefaults()] { return LlmProbe::check(request); },
        [this](const LlmCheck &check) {
            m_running = false;
            m_button->setEnabled(true);
            show(check);
        });
}

void LlmConnectionTest::show(const LlmCheck &check)
{
    QStringList lines { check.verdict };
    lines += check.findings;
    lines += check.limitLines();
    for (const QString &w : check.warnings)
        lines << tr("warning: %1").arg(w);
    m_result->setText(lines.join(QLatin1Char('\n')));
    ErrorTint::apply(m_result, !(check.ok && check.warnings.isEmpty()));
    Q_EMIT finished(check);
}

} // namespace ak
