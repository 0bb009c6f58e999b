#pragma once

#include "deviceinfo.h"
#include "experiment.h"
#include "inmodelcheck.h"
#include "kernelrecord.h"
#include "loopinfo.h"
#include "modelverification.h"
#include "moveonrules.h"
#include "runconfig.h"

#include <QByteArray>
#include <QDateTime>
#include <QHash>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

#include <memory>
#include <optional>

namespace ak {

// A change of the move-on rules recorded in the log ({"type":"run","action":"move_on"}).
struct MoveOnChange
{
    int line = 0; // line in experiments.jsonl
    QDateTime time;
    QString by; // who: "alice@gpu1 via autokernel-cli (pid 4242)"
    MoveOnRules rules; // the rules from then on
};

// The whole in-memory model of a run directory, as the loader builds it. Immutable once built and
// shared between threads through RunSnapshotPtr (heaptrack's shared_ptr<const Result> pattern).
struct RunSnapshot
{
    QString runDir; // the run's model and device: config.model, config.device
    QVector<KernelRecord> kernels; // in rank order
    QVector<Experiment> experiments; // in id order
    QStringList warnings; // load problems that did not stop the load ("experiments.jsonl:12: ...")
    bool reviewMode = false; // kept experiments wait as pending until accepted
    QString bestCommit; // refs/heads/best: a commit combining every kernel's head
    QByteArray runJson; // run.json as stored (settings, move-on rules, agent config); a
                        // logged move-on change it does not show yet is applied (see
                        // docs/run-format.md, "Move-on rules")
    RunConfig config; // runJson parsed (RunLoader::setRunJson keeps the two together);
                      // reviewMode above starts from it
    QVector<MoveOnChange> moveOnChanges; // every logged change of the rules, oldest first
    std::optional<ModelVerification> verification; // verification.json; none when not verified or unusable
    InModelChecks inModel; // inmodel.json: the loop's in-model checks of its keeps (#38 item 5)
    // Not empty when the run was restored from a recording (RunRecording): what it is, for the
    // window to say so ("a recording of the llama run on NVIDIA H200 (2026-12-05)").
    QString recording;
    // The CLI loop's budget and agent (.git/autokernel-loop.json) while one runs; none otherwise.
    std::optional<LoopInfo> loop;
    QHash<QString, int> kernelIndex; // kernel folder name ("01-matmul") -> index in kernels
    QHash<int, int> experimentIndex; // experiment id -> index in experiments

    // What the loader read, so that the next load of a live run reads only what was appended
    // (RunLoader::reload): whole lines of experiments.jsonl, run.json as it was on disk, and how many
    // of the warnings came from those two (the rest, verification.json's, are read again each time).
    qint64 logBytes = 0;
    int logLines = 0;
    QByteArray runJsonOnDisk;
    int logWarnings = 0;

    const Experiment *experiment(int id) const
    {
        const auto it = experimentIndex.constFind(id);
        return it == experimentIndex.constEnd() ? nullptr : &experiments[*it];
    }
    const KernelRecord *kernel(const QString &name) const
    {
        const auto it = kernelIndex.constFind(name);
        return it == kernelIndex.constEnd() ? nullptr : &kernels[*it];
    }
    // Whole-model speedup if every kernel's head (best kept, else its baseline) ran inside the model
    // at its harness speedup (Amdahl over the shares); the projection beside verify's measurement.
    double projectedSpeedup() const;
    // A kernel the loop retired (done) whose head is still slower than PyTorch's own: the run says
    // "PyTorch wins" (table, status, summary, report) and verify does not offer it for the model.
    bool pytorchWins(const KernelRecord &k) const;
    // The head's speedup over PyTorch (NaN when not measured or not correct).
    double headSpeedup(const KernelRecord &k) const;
    // The head's speedup over the best PyTorch measured: eager or torch.compile, whichever is faster.
    double headBestTorchSpeedup(const KernelRecord &k) const;
    // The state as people read it: kernelStateName, or "pytorch wins".
    QString stateText(const KernelRecord &k) const;
    // Whether a harness win was a model win (#38): the harness wins (kernels the loop kept a change in
    // whose head beats the PyTorch it replaces in the harness), and those of them that `v` measured
    // saving time inside the model (in its final set, or a leave-one-out effect above zero). A harness win
    // `v` did not time there (not plugged) is not among the gains. Kernels the loop kept a change in whose
    // head is still slower than PyTorch are no harness win: verify does not offer them (`slower`). `v` is
    // given, not this snapshot's: a verification just made may still be queued for the run's writer.
    struct KeptInModel
    {
        QStringList kept;
        QStringList gains;
        QStringList slower;
    };
    KeptInModel keptInModel(const ModelVerification &v) const;
};

using RunSnapshotPtr = std::shared_ptr<const RunSnapshot>;

} // namespace ak

Q_DECLARE_METATYPE(ak::RunSnapshotPtr)
