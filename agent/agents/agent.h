#pragma once

#include "agents/agentcontext.h"
#include "agents/agentresult.h"

#include <atomic>

namespace ak {

// One interface for every agent (tune, LLM, command, replay). propose() blocks and is called from a
// loop worker thread, one call at a time per instance; requestStop() may be called from any thread
// and makes a running propose() return an AgentError of kind Cancelled promptly (network requests
// aborted, child processes killed). The stop flag stays set until clearStop(): a stop that arrives
// just before propose() starts is not lost.
class Agent
{
public:
    virtual ~Agent();
    Agent(const Agent &) = delete;
    Agent &operator=(const Agent &) = delete;

    // Recorded as Experiment::agent: "tune", "llm:<model>", "command", "replay".
    virtual QString name() const = 0;
    virtual AgentResult propose(const AgentContext &context) = 0;

    void requestStop() { m_stop.store(true); }
    void clearStop() { m_stop.store(false); }
    bool stopRequested() const { return m_stop.load(); }

protected:
    Agent() = default;
    // Fills agentName and, when not set by the agent, the wall time.
    AgentResult finish(AgentResult result, double seconds) const;
    AgentResult cancelled(double seconds) const;
    const std::atomic<bool> *stopFlag() const { return &m_stop; }

private:
    std::atomic<bool> m_stop { false };
};

} // namespace ak
