#include "agents/agent.h"

#include "enumnames.h"

#include <utility>

namespace ak {

namespace {
// The log's and the loop's names of why a proposal failed.
constexpr EnumToken<AgentError::Kind> kAgentErrorNames[] = {
    { AgentError::Kind::Network, "network" },
    { AgentError::Kind::Http, "http" },
    { AgentError::Kind::Timeout, "timeout" },
    { AgentError::Kind::BadReply, "bad-reply" },
    { AgentError::Kind::NoChange, "no-change" },
    { AgentError::Kind::Command, "command" },
    { AgentError::Kind::Config, "config" },
    { AgentError::Kind::Exhausted, "exhausted" },
    { AgentError::Kind::Cancelled, "cancelled" },
};
} // namespace

QString AgentError::kindName(Kind k)
{
    return tokenOf(kAgentErrorNames, k);
}

bool AgentError::isOutageDescription(const QString &description)
{
    for (Kind k : { Kind::Network, Kind::Timeout, Kind::Http })
        if (description == failureDescription(k))
            return true;
    return false;
}

AgentResult AgentResult::success(AgentProposal p)
{
    AgentResult r;
    r.m_ok = true;
    r.m_proposal = std::move(p);
    return r;
}

AgentResult AgentResult::failure(AgentError e)
{
    AgentResult r;
    r.m_ok = false;
    r.m_error = std::move(e);
    return r;
}

Agent::~Agent() = default;

AgentResult Agent::finish(AgentResult result, double seconds) const
{
    if (result.ok()) {
        AgentProposal p = result.proposal();
        p.agentName = name();
        if (p.usage.seconds <= 0)
            p.usage.seconds = seconds;
        return AgentResult::success(std::move(p));
    }
    AgentError e = result.error();
    e.agentName = name();
    if (e.usage.seconds <= 0)
        e.usage.seconds = seconds;
    return AgentResult::failure(std::move(e));
}

AgentResult Agent::cancelled(double seconds) const
{
    AgentError e;
    e.kind = AgentError::Kind::Cancelled;
    e.reason = QStringLiteral("stopped by request");
    e.agentName = name();
    e.usage.seconds = seconds;
    return AgentResult::failure(std::move(e));
}

} // namespace ak
