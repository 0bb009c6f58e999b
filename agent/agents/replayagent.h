#pragma once

#include "agents/agent.h"

#include <QHash>
#include <QMutex>
#include <QVector>

namespace ak {

// One proposal as a recorded run holds it (the run-store reader builds these from a run directory).
struct RecordedProposal
{
    QString kernel; // kernel folder name, as in Experiment::kernel
    QString kernelPy;
    QString description;
    QString agent; // who proposed it originally ("llm:...", "tune", ...)
};

// Replays the proposals of a recorded run, per kernel in their recorded order, for demos and tests.
// Where it stands for a kernel is the number of experiments the history attributes to "replay" (so a
// restarted loop goes on from there), or the number it served in this process if that is larger (a
// loop that does not record agent errors still advances). Exhausted when a kernel has no more.
class ReplayAgent : public Agent
{
public:
    explicit ReplayAgent(QVector<RecordedProposal> proposals);

    QString name() const override { return QStringLiteral("replay"); }
    AgentResult propose(const AgentContext &context) override;

private:
    QVector<RecordedProposal> m_proposals;
    mutable QMutex m_mutex;
    QHash<QString, int> m_served;
};

} // namespace ak
