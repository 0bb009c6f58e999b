#pragma once

#include <QString>
#include <QStringList>

namespace ak {

// One Slurm allocation for a loop's devices (`autokernel-cli run --slurm 'ARGS'`): `salloc
// --no-shell ARGS` takes it, each device's worker is then an `srun --jobid=N` step inside it
// (WorkerLauncher), and release() — or the destructor — ends the job with `scancel`, so a stopped
// loop leaves nothing queued or running. We schedule nothing ourselves: Slurm does, with the
// user's own arguments (partition, account, time, GPUs).
class SlurmAllocation
{
public:
    SlurmAllocation() = default;
    ~SlurmAllocation();
    SlurmAllocation(const SlurmAllocation &) = delete;
    SlurmAllocation &operator=(const SlurmAllocation &) = delete;

    // Blocks until Slurm grants the allocation (salloc waits in the queue) or refuses it; false with
    // *error holding salloc's own words. `salloc` is looked up on PATH unless `sallocPath` is given.
    bool allocate(const QString &arguments, QString *error, int timeoutMs = -1);
    void release();

    qint64 jobId() const { return m_jobId; }
    // The launcher for one device's worker: one task, a GPU of its own when `gpu`.
    QString launcher(bool gpu) const;

    // "salloc: Granted job allocation 123" -> 123; 0 when the text has no grant.
    static qint64 parseJobId(const QString &sallocOutput);
    // The job srun refused to start a step in because it is over (cancelled, out of time, purged):
    // "srun: error: Slurm job 123 has expired" or "Unable to confirm allocation for job 123: Invalid
    // job id specified" -> 123, with srun's words in *words; 0 for anything else (a controller that
    // cannot be reached now is not an ended job). Waiting does not bring such a job back.
    static qint64 endedJob(const QString &srunOutput, QString *words = nullptr);

private:
    qint64 m_jobId = 0;
};

} // namespace ak
