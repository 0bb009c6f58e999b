#pragma once

#include "moveonrules.h"
#include "runsnapshot.h"

#include <QDateTime>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QVector>

namespace ak {

// Which kernel the loop works on next, decided from the run directory alone (a RunSnapshot), so a
// restarted loop resumes exactly where the last one stopped. Pure functions: no I/O, no clock.
class Orchestrator
{
public:
    // Kernel folder names in Amdahl order: largest whole-model gain at 90% of the kernel's roof
    // first; where no roof is known (CPU runs) the largest share of the model's time first; then rank.
    // Only the first maxKernels (0 = all). Includes pinned, skipped and done kernels.
    static QStringList amdahlOrder(const RunSnapshot &run, int maxKernels = 0);

    // The kernel's standing for the move-on rules. Time is the kernel's own working time (agent time
    // plus benchmark time of its experiments), so neither other kernels nor the hours a loop was
    // stopped count against it; `started` is set to now minus that time.
    static KernelProgress progress(const RunSnapshot &run, const QString &kernel, const QDateTime &now);

    // Whether the baseline of the kernel still needs measuring (no correct baseline metrics yet).
    static bool needsBaseline(const RunSnapshot &run, const QString &kernel);
    // The kernel's baseline experiment, or nullptr.
    static const Experiment *baseline(const RunSnapshot &run, const QString &kernel);

    struct Choice
    {
        QString kernel; // empty: nothing left to work on
        // Kernels the rules retire on the way (folder name, explanation); the loop marks them done.
        QVector<QPair<QString, MoveOnDecision>> retire;
    };
    // The first kernel in Amdahl order that is waiting or active, not claimed by another loop and
    // not retired by a move-on rule.
    static Choice next(const RunSnapshot &run, const MoveOnRules &rules, int maxKernels,
        const QSet<QString> &claimed, const QDateTime &now);

    // The run's move-on rules: run.json's "move_on" object, defaults where absent. Problems are
    // reported in *error (naming the field) and the defaults are used.
    static MoveOnRules rulesOf(const RunSnapshot &run, QString *error = nullptr);

    // Statuses that count as "not an improvement" for the consecutive-reverts rule.
    static bool isRevertLike(ExperimentStatus s);
};

} // namespace ak
