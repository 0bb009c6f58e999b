#pragma once

#include "agents/agent.h"
#include "agents/agentconfig.h"

#include <QHash>
#include <QStringList>

namespace ak {

// Runs an external coding agent chosen by the user, e.g. `mytool --prompt-file {prompt} --workdir {dir}`,
// in a scratch copy of the kernel folder and takes the kernel.py it leaves there.
//
// The template is split into words like a POSIX shell splits them ('...', "...", backslash), but no
// shell runs it (no globbing, pipes or variables; write `sh -c '...'` for those) and then {prompt} (the
// prompt file: program.md + the kernel's context), {dir} (the scratch copy; also the working directory) and
// {kernel} (its kernel.py) are replaced in each argument. The same paths are in $AUTOKERNEL_PROMPT_FILE,
// $AUTOKERNEL_WORKDIR and $AUTOKERNEL_KERNEL_FILE. Description: the first line of a DESCRIPTION file left in
// {dir}, else the first line of its standard output. The command runs in its own process group; on stop or
// timeout the whole group is killed. The scratch directory is removed afterwards.
class CommandAgent : public Agent
{
public:
    explicit CommandAgent(const AgentConfig &config);
    CommandAgent(const QString &commandTemplate, int timeoutMs);

    QString name() const override { return QStringLiteral("command"); }
    AgentResult propose(const AgentContext &context) override;

    // The argument list for the template with its placeholders replaced; empty with *error set when
    // the template is empty or its quotes do not balance.
    static QStringList expand(
        const QString &commandTemplate, const QHash<QString, QString> &values, QString *error);

private:
    QString m_template;
    int m_timeoutMs;
};

} // namespace ak
