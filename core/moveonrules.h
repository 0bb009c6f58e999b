#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QMetaType>
#include <QString>

#include <cmath>

namespace ak {

// When the orchestrator leaves a kernel for the next one. Any rule firing is enough; a threshold of 0
// switches its rule off. Stored in run.json under "move_on" (see toJson for the field names).
struct MoveOnRules
{
    int maxConsecutiveReverts = 5; // "max_consecutive_reverts": reverts/failures in a row
    double roofPct = 90.0; // "roof_pct": best pct_peak of the kernel, % of its bounding roof
    double hoursPerKernel = 2.0; // "hours_per_kernel": counted from when *this* kernel started
    double speedupOverBaseline = 2.0; // "speedup_over_baseline": best vs the kernel's own baseline
    // "max_in_model_misses": kept harness wins (faster than PyTorch in the harness) that the in-model
    // check found no gain for in the model, in a row (#38 item 5; InModelChecks::missesInARow)
    int maxInModelMisses = 2;

    QByteArray toJson() const;
    // Missing fields keep their defaults; unknown fields, wrong types and out-of-range values are
    // errors naming the field. On error *out is unchanged.
    static bool fromJson(const QByteArray &text, MoveOnRules *out, QString *error);
    bool save(const QString &path, QString *error) const;
    static bool load(const QString &path, MoveOnRules *out, QString *error);
    // One line for people: "5 reverts in a row, 90% of roof, 2x over baseline, 2 h per kernel, 2 misses
    // in the model"; a rule at 0 reads "no revert limit", "no roof goal", "no speedup goal", "no time
    // limit", "no in-model rule".
    QString summary() const;

    bool operator==(const MoveOnRules &o) const;
    bool operator!=(const MoveOnRules &o) const { return !(*this == o); }
};

// The state of the kernel being worked on, as the orchestrator reads it from the run directory.
struct KernelProgress
{
    int consecutiveReverts = 0;
    double bestPctPeak = std::nan(""); // NaN: nothing correct measured yet
    double bestSpeedup = std::nan(""); // best latency vs this kernel's baseline latency
    QDateTime started; // first experiment on this kernel (invalid: not started)
    int inModelMisses = 0; // harness wins the in-model checks did not see, in a row
    QDateTime now;
};

enum class MoveOnReason { None, NearRoof, SpeedupReached, ConsecutiveReverts, TimeBudget, NotInModel };

struct MoveOnDecision
{
    bool moveOn = false;
    MoveOnReason reason = MoveOnReason::None;
    QString explanation; // "best 91.3% of roof >= 90%"; empty when staying
};

// "none", "near_roof", "speedup_reached", "consecutive_reverts", "time_budget", "not_in_model"
QString moveOnReasonName(MoveOnReason r);

// Goals (roof, speedup) are checked before give-up rules (reverts, time), so a kernel that reached
// its roof on the experiment that also ran out its time is reported as done, not as timed out.
MoveOnDecision evaluate(const MoveOnRules &rules, const KernelProgress &kernel);

} // namespace ak

Q_DECLARE_METATYPE(ak::MoveOnRules)
