#pragma once

#include <QMetaType>
#include <QString>

namespace ak {

// What proposing cost, recorded per experiment whether or not the proposal was usable.
struct AgentUsage
{
    qint64 tokensIn = 0;
    qint64 tokensOut = 0;
    double cost = 0; // in the price table's currency (USD); 0 when the model has no price
    double seconds = 0; // wall time of propose()
    int attempts = 0; // HTTP attempts (retries included); 0 for agents without a network
    QString note; // something the run's log should say once (the LLM agent's context sizing)
};

struct AgentProposal
{
    QString kernelPy; // the full new kernel.py
    QString description; // one line, e.g. "BLOCK_SIZE 256 -> 512"
    QString agentName; // "tune", "llm:<model>", "command", "replay"
    AgentUsage usage;
    QString rawReply; // the model's or command's full output, for the experiment's record
};

struct AgentError
{
    // Cancelled is not a failed experiment (a person pressed stop); Exhausted means this agent has
    // nothing left to try for the kernel (the orchestrator may move on); the rest are recorded failures.
    enum class Kind { Network, Http, Timeout, BadReply, NoChange, Command, Config, Exhausted, Cancelled };
    Kind kind = Kind::BadReply;
    QString reason; // one line, never holds a secret
    bool retryable = false; // the same request may succeed later (429, 5xx, network, timeout)
    QString agentName;
    AgentUsage usage;
    QString rawReply; // what came back, when anything did (a garbage reply is kept for review)

    static QString kindName(Kind k);
    // The agent could not be reached or did not answer (network, timeout, HTTP errors left after
    // the client's retries): nothing about the kernel. These trip the loop's breaker and do not
    // count toward a kernel's consecutive reverts.
    static bool isOutage(Kind k) { return k == Kind::Network || k == Kind::Timeout || k == Kind::Http; }
    // The description of the failed experiment recorded for an agent error.
    static QString failureDescription(Kind k) { return QStringLiteral("agent error (%1)").arg(kindName(k)); }
    // True for the experiment recorded for an outage (its description is failureDescription's).
    static bool isOutageDescription(const QString &description);
};

// Either a proposal or an error, never both.
class AgentResult
{
public:
    static AgentResult success(AgentProposal p);
    static AgentResult failure(AgentError e);

    bool ok() const { return m_ok; }
    const AgentProposal &proposal() const { return m_proposal; }
    const AgentError &error() const { return m_error; }
    const AgentUsage &usage() const { return m_ok ? m_proposal.usage : m_error.usage; }

private:
    bool m_ok = false;
    AgentProposal m_proposal;
    AgentError m_error;
};

} // namespace ak

Q_DECLARE_METATYPE(ak::AgentProposal)
Q_DECLARE_METATYPE(ak::AgentError)
