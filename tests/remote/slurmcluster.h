#pragma once

#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QTemporaryDir>

namespace ak::test {

// A single-node Slurm on this machine, from Debian's slurm-wlm and munge: munged (unless one runs),
// slurmctld and slurmd in the foreground as children of the test, one node with this machine's
// CPUs, one partition, configured in a temporary directory (SLURM_CONF points the client tools at
// it). Needs root, as slurmd does; no cgroups (proctrack/linuxproc), so it runs in a container.
class SlurmCluster
{
public:
    SlurmCluster() = default;
    ~SlurmCluster();
    SlurmCluster(const SlurmCluster &) = delete;
    SlurmCluster &operator=(const SlurmCluster &) = delete;

    // Why it cannot run here (not root, packages missing); empty when it can.
    static QString unavailableReason();

    bool start(QString *error);
    // The environment for salloc, srun, squeue and scancel: this one, plus SLURM_CONF.
    QProcessEnvironment environment() const;
    // Runs a Slurm client tool and returns its standard output ("" on failure).
    QString tool(const QString &program, const QStringList &args) const;

private:
    QTemporaryDir m_dir;
    QProcess m_ctld;
    QProcess m_slurmd;
    QProcess m_munged;
};

} // namespace ak::test
