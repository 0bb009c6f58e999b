#pragma once

#include "llm/llmrequest.h"

#include <QString>
#include <QStringList>

namespace ak {

// What `autokernel-cli llm-check` found about an LLM server before a run relies on it.
struct LlmCheck
{
    bool ok = false; // the model answered a small request
    QString verdict; // one line: "ok: …" or the cause and the setting to change
    QStringList findings; // what the server said about itself beyond the limits (its models)
    QStringList warnings; // what will go wrong in a run (a context too small for the prompt)
    int contextTokens = 0; // 0: the server did not say
    QString contextSource; // where contextTokens came from
    int outputTokens = 0; // the model's output limit; 0: nobody said
    QString outputSource; // where outputTokens came from
    int maxTokens = 0; // what a run asks for: the configured max_tokens, capped at outputTokens

    // "context: …" and "output limit: …", each with where it came from (or that nobody said), as
    // llm-check prints them.
    QStringList limitLines() const;
};

// One small request and what the server tells about itself, so a misconfiguration shows before an
// overnight run instead of during it: the models listed at /models (vLLM adds max_model_len),
// llama.cpp's /props (n_ctx), then a 16-token chat request through the agent's own client, its
// failure classified as the loop would (LlmAgent::configurationCause).
class LlmProbe
{
public:
    // The prompt a run sends (program.md, the kernel and its context), in tokens, for the warning.
    static constexpr int TypicalPromptTokens = 13000;

    static LlmCheck check(const LlmRequest &request);
};

} // namespace ak
