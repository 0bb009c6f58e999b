#include "slurmcluster.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QHostInfo>
#include <QTcpServer>
#include <QThread>

#include <unistd.h>

namespace ak::test {

namespace {

int freePort()
{
    QTcpServer probe;
    return probe.listen(QHostAddress::LocalHost, 0) ? probe.serverPort() : 0;
}

void end(QProcess &p)
{
    if (p.state() == QProcess::NotRunning)
        return;
    p.terminate();
    if (!p.waitForFinished(5000))
        p.kill();
    p.waitForFinished(3000);
}

} // namespace

SlurmCluster::~SlurmCluster()
{
    tool(QStringLiteral("scancel"), { QStringLiteral("--user=root") }); // nothing of ours left queued
    end(m_slurmd);
    end(m_ctld);
    end(m_munged);
}

QString SlurmCluster::unavailableReason()
{
    if (::geteuid() != 0)
        return QStringLiteral("a single-node Slurm needs root (slurmd does)");
    for (const char *f : { "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/bin/srun" })
        if (!QFile::exists(QLatin1String(f)))
            return QStringLiteral("%1 is missing (Debian's slurm-wlm and munge; packaging/setup-deps.sh "
                                  "installs them)")
                .arg(QLatin1String(f));
    return QString();
}

QProcessEnvironment SlurmCluster::environment() const
{
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("SLURM_CONF"), m_dir.filePath(QStringLiteral("slurm.conf")));
    return env;
}

QString SlurmCluster::tool(const QString &program, const QStringList &args) const
{
    QProcess p;
    p.setProcessEnvironment(environment());
    p.start(program, args);
    if (!p.waitForFinished(20000) || p.exitCode() != 0)
        return QString();
    return QString::fromUtf8(p.readAllStandardOutput());
}

bool SlurmCluster::start(QString *error)
{
    *error = unavailableReason();
    if (!error->isEmpty())
        return false;
    const QString d = m_dir.path();
    for (const char *sub : { "state", "spool" })
        QDir().mkpath(d + QLatin1Char('/') + QLatin1String(sub));
    // munge: the authentication Slurm's daemons and tools share; one already running serves us too.
    if (!QFile::exists(QStringLiteral("/run/munge/munge.socket.2"))) {
        QDir().mkpath(QStringLiteral("/run/munge"));
        QProcess::execute(
            QStringLiteral("chown"), { QStringLiteral("munge:munge"), QStringLiteral("/run/munge") });
        m_munged.start(QStringLiteral("runuser"),
            { QStringLiteral("-u"), QStringLiteral("munge"), QStringLiteral("--"),
                QStringLiteral("/usr/sbin/munged"), QStringLiteral("--foreground") });
        QElapsedTimer t;
        t.start();
        while (!QFile::exists(QStringLiteral("/run/munge/munge.socket.2")) && t.elapsed() < 10000)
            QThread::msleep(100);
        if (!QFile::exists(QStringLiteral("/run/munge/munge.socket.2"))) {
            *error = QStringLiteral("munged did not start: ")
                + QString::fromUtf8(m_munged.readAllStandardError());
            return false;
        }
    }
    const QString host = QHostInfo::localHostName();
    const long cpus = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
    QFile conf(d + QStringLiteral("/slurm.conf"));
    if (!conf.open(QIODevice::WriteOnly)) {
        *error = conf.errorString();
        return false;
    }
    conf.write(
        QStringLiteral("ClusterName=autokernel-test\nSlurmctldHost=%1(127.0.0.1)\nSlurmUser=root\n"
                       "SlurmdUser=root\nAuthType=auth/munge\nStateSaveLocation=%2/state\n"
                       "SlurmdSpoolDir=%2/spool\nSlurmctldPidFile=%2/slurmctld.pid\n"
                       "SlurmdPidFile=%2/slurmd.pid\nSlurmctldPort=%3\nSlurmdPort=%4\n"
                       "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
                       "SchedulerType=sched/builtin\nSelectType=select/cons_tres\n"
                       "SelectTypeParameters=CR_CPU\nReturnToService=2\nJobCompType=jobcomp/none\n"
                       "AccountingStorageType=accounting_storage/none\nSlurmctldLogFile=%2/slurmctld.log\n"
                       "SlurmdLogFile=%2/slurmd.log\nSlurmctldDebug=error\nSlurmdDebug=error\nNodeName=%1 "
                       "NodeAddr=127.0.0.1 CPUs=%5 "
                       "RealMemory=1000 State=UNKNOWN\nPartitionName=debug Nodes=ALL Default=YES "
                       "MaxTime=INFINITE State=UP\n")
            .arg(host, d)
            .arg(freePort())
            .arg(freePort())
            .arg(cpus)
            .toUtf8());
    conf.close();
    for (QProcess *p : { &m_ctld, &m_slurmd }) {
        p->setProcessEnvironment(environment());
        p->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    }
    m_ctld.start(QStringLiteral("/usr/sbin/slurmctld"), { QStringLiteral("-D"), QStringLiteral("-i") });
    m_slurmd.start(QStringLiteral("/usr/sbin/slurmd"), { QStringLiteral("-D") });
    QElapsedTimer t;
    t.start();
    while (t.elapsed() < 30000) {
        if (tool(
                QStringLiteral("sinfo"), { QStringLiteral("-h"), QStringLiteral("-o"), QStringLiteral("%T") })
                .trimmed()
            == QLatin1String("idle"))
            return true;
        if (m_ctld.state() == QProcess::NotRunning || m_slurmd.state() == QProcess::NotRunning)
            break;
        QThread::msleep(250);
    }
    QFile log(d + QStringLiteral("/slurmctld.log"));
    log.open(QIODevice::ReadOnly);
    *error
        = QStringLiteral("the Slurm node did not come up: ") + QString::fromUtf8(log.readAll().right(2000));
    return false;
}

} // namespace ak::test
