#include "loop/slurmallocation.h"

#include "agents/agentlog.h"
#include "shellwords.h"

#include <QProcess>
#include <QRegularExpression>

namespace ak {

SlurmAllocation::~SlurmAllocation()
{
    release();
}

qint64 SlurmAllocation::parseJobId(const QString &sallocOutput)
{
    static const QRegularExpression granted(QStringLiteral("Granted job allocation (\\d+)"));
    const QRegularExpressionMatch m = granted.match(sallocOutput);
    return m.hasMatch() ? m.captured(1).toLongLong() : 0;
}

qint64 SlurmAllocation::endedJob(const QString &srunOutput, QString *words)
{
    // srun's own words (src/srun/libsrun/allocate.c): ESLURM_ALREADY_DONE while the controller still
    // remembers the job (MinJobAge), ESLURM_INVALID_JOB_ID after it forgot it.
    static const QRegularExpression ended(QStringLiteral(
        "Slurm job (\\d+) has expired|Unable to confirm allocation for job (\\d+): (?:Invalid job id "
        "specified|Job/step already completing or completed)"));
    const QRegularExpressionMatch m = ended.match(srunOutput);
    if (!m.hasMatch())
        return 0;
    if (words)
        *words = m.captured(0);
    return (m.captured(1).isEmpty() ? m.captured(2) : m.captured(1)).toLongLong();
}

bool SlurmAllocation::allocate(const QString &arguments, QString *error, int timeoutMs)
{
    QChar unclosed;
    const QStringList args = shellwords::split(arguments, &unclosed);
    if (!unclosed.isNull()) {
        *error = QStringLiteral("--slurm has an unclosed %1 quote: %2").arg(QString(unclosed), arguments);
        return false;
    }
    QProcess salloc;
    salloc.setProcessChannelMode(QProcess::MergedChannels);
    salloc.start(QStringLiteral("salloc"),
        QStringList { QStringLiteral("--no-shell"), QStringLiteral("--job-name=autokernel") } + args);
    if (!salloc.waitForStarted(10000)) {
        *error = QStringLiteral("cannot run salloc (Slurm's client tools are not on PATH): ")
            + salloc.errorString();
        return false;
    }
    salloc.closeWriteChannel();
    if (!salloc.waitForFinished(timeoutMs)) {
        salloc.kill(); // salloc cancels a request it was waiting for when it dies
        salloc.waitForFinished(5000);
        *error = QStringLiteral("Slurm did not grant the allocation in time");
        return false;
    }
    const QString out = QString::fromUtf8(salloc.readAll()).trimmed();
    m_jobId = parseJobId(out);
    if (salloc.exitStatus() != QProcess::NormalExit || salloc.exitCode() != 0 || m_jobId == 0) {
        *error = QStringLiteral("salloc %1 failed: %2")
                     .arg(arguments, out.isEmpty() ? QStringLiteral("no output") : out);
        m_jobId = 0;
        return false;
    }
    qCInfo(lcAgent) << "Slurm job" << m_jobId << "allocated";
    return true;
}

void SlurmAllocation::release()
{
    if (m_jobId == 0)
        return;
    QProcess::execute(QStringLiteral("scancel"), { QString::number(m_jobId) });
    qCInfo(lcAgent) << "Slurm job" << m_jobId << "cancelled";
    m_jobId = 0;
}

QString SlurmAllocation::launcher(bool gpu) const
{
    QString words = QStringLiteral("srun --jobid=%1 --ntasks=1 --nodes=1 --quiet").arg(m_jobId);
    if (gpu)
        words += QStringLiteral(" --gpus=1");
    return words;
}

} // namespace ak
