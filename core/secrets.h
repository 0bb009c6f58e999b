#pragma once

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace ak::secrets {

// The process's secrets (API keys the agents read), known by name and by value, so that no child
// process inherits them and no text that reaches disk, a log or a prompt carries them. Thread-safe.
// Values shorter than 8 characters are not registered (they would redact ordinary words).
void registerValue(const QString &value);
void registerName(const QString &environmentVariable);

// Names that look like they hold a secret or reach one: *_KEY, *TOKEN*, *SECRET*, *PASSWORD*,
// *CREDENTIAL*, AWS_*, SSH_AUTH_SOCK, plus every registered name.
bool looksSecret(const QString &name);

// `env` without the variables looksSecret() matches: what a worker (and so a kernel) is started with.
QProcessEnvironment scrubbed(const QProcessEnvironment &env);

// `text` with every registered value, and every token shaped like a well-known key format (sk-…,
// sk-ant-…, hf_…, ghp_…, github_pat_…, AKIA…, xox[bp]-…), replaced by "[redacted]".
QString redact(const QString &text);

} // namespace ak::secrets
