#pragma once

#include "agents/replayagent.h"

#include <QString>
#include <QVector>

namespace ak {

// Reads the proposals of a recorded run for the replay agent: every experiment an agent proposed
// (baselines, a person's reverts and agent errors, which changed nothing, are left out), in id order,
// with the kernel.py read back from its commit. Needs no lock: it only reads.
QVector<RecordedProposal> readRecordedProposals(const QString &runDir, QString *error = nullptr);

} // namespace ak
