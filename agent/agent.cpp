#include "agent.h"

#include <utility>

namespace ak {

QString AgentError::kindName(Kind k)
{
    switch (k) {
    case Kind::Network:
        return QStringLiteral("network");
    case Kind::Http:
        return QStringLiteral("http");
    case Kind::Timeout:
        return QStringLiteral("timeout");
    case Kind::BadReply:
        return QStringLiteral("bad-reply");
    case Kind::NoChange:
        return QStringLiteral("no-change");
    case Kind::Command:
        return QStringLiteral("command");
    case Kind::Config:
        return QStringLiteral("config");
    case Kind::Exhausted:
        return QStringLiteral("exhausted");
    case Kind::Cancelled:
        return QStringLiteral("cancelled");
    }
    return QString();
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
