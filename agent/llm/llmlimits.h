#pragma once

#include "llm/llmrequest.h"

#include <QString>
#include <QStringList>

namespace ak {

// How much a model can read and write, and how a run fits its prompt into that. Discovered where the
// server says it (vLLM's /v1/models max_model_len, llama.cpp's /props n_ctx, Ollama's /api/ps
// context_length or /api/show num_ctx), else from the shipped table of hosted models
// (resources/llm-limits.json); a run's agent.context_tokens overrides both.
struct LlmLimits
{
    int contextTokens = 0; // 0: unknown
    int outputTokens = 0; // the model's own output limit; 0: unknown
    QString source; // of contextTokens: "vLLM max_model_len", "llama.cpp n_ctx", "table", "run.json" ...
    // Of outputTokens, apart: the context may come from the server and the output limit from the table.
    QString outputSource;
    // What the server said about itself beyond the limits (its models); the limits and their sources
    // are said by LlmCheck::limitLines.
    QStringList findings;
    QStringList warnings; // what will go wrong (Ollama's default context, a model not listed)

    static LlmLimits discover(const LlmRequest &request);
    // The table's entry for `model` (longest matching prefix); zeros when none.
    static LlmLimits fromTable(const QString &model);

    // What one request asks for, given the prompt's size.
    struct Fit
    {
        int maxTokens = 0; // to send
        bool compact = false; // send the compact playbook instead of the full one
        QString error; // neither fits: the cause and the setting to change
    };
    // Tokens a reply needs at least (a whole kernel.py and a few lines); below it the reply is cut.
    static constexpr int MinOutputTokens = 4096;
    // Room left between prompt and output for the chat template and the estimate's error.
    static constexpr int MarginTokens = 512;
    Fit fit(int configuredMaxTokens, int fullPromptTokens, int compactPromptTokens) const;
    // A conservative estimate (code and English run ~3.5-4 characters per token; 3 overestimates).
    static int estimateTokens(const QString &text) { return int(text.size() / 3) + 1; }
};

} // namespace ak
