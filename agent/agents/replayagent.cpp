#include "agents/replayagent.h"

#include <algorithm>

namespace ak {

ReplayAgent::ReplayAgent(QVector<RecordedProposal> proposals)
    : m_proposals(std::move(proposals))
{ }

AgentResult ReplayAgent::propose(const AgentContext &context)
{
    if (stopRequested())
        return cancelled(0);
    int cursor = 0;
    for (const Experiment &e : context.history) {
        if (e.agent == name() && (e.kernel.isEmpty() || e.kernel == context.kernelName))
            ++cursor;
    }
    QMutexLocker lock(&m_mutex);
    cursor = std::max(cursor, m_served.value(context.kernelName));

    int index = 0;
    for (const RecordedProposal &p : m_proposals) {
        if (p.kernel != context.kernelName)
            continue;
        if (index++ < cursor)
            continue;
        m_served.insert(context.kernelName, cursor + 1);
        AgentProposal out;
        out.kernelPy = p.kernelPy;
        out.description = p.description;
        return finish(AgentResult::success(out), 0);
    }
    AgentError e;
    e.kind = AgentError::Kind::Exhausted;
    e.reason = QStringLiteral("the recorded run has no more proposals for %1 (%2 replayed)")
                   .arg(context.kernelName)
                   .arg(index);
    return finish(AgentResult::failure(e), 0);
}

} // namespace ak
