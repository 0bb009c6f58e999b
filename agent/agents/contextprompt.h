#pragma once

#include "agents/agentcontext.h"

namespace ak {

// The user message of an experiment: what changes from one experiment to the next (the system prompt,
// built by PromptBuilder from program.md, holds the device, the kernel's shapes and the rules). It
// gives the kernel's current standing (latency, speedup, % of roof), the recent history of this
// kernel with results and failure reasons, and the current kernel.py in full.
class ContextPrompt
{
public:
    static QString render(const AgentContext &context, int maxHistory = 25);
};

} // namespace ak
