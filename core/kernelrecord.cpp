#include "kernelrecord.h"

namespace ak {

QString kernelStateName(KernelState s)
{
    switch (s) {
    case KernelState::Waiting:
        return QStringLiteral("waiting");
    case KernelState::Active:
        return QStringLiteral("active");
    case KernelState::Pinned:
        return QStringLiteral("pinned");
    case KernelState::Skipped:
        return QStringLiteral("skipped");
    case KernelState::Done:
        return QStringLiteral("done");
    case KernelState::Unpluggable:
        return QStringLiteral("unpluggable");
    }
    return QString();
}

QString kernelStateText(KernelState s, bool pytorchWins)
{
    if (s == KernelState::Unpluggable)
        return QStringLiteral("not pluggable");
    return pytorchWins ? QStringLiteral("pytorch wins") : kernelStateName(s);
}

QString KernelRecord::keyOf(const QString &folderOrName)
{
    QString n = folderOrName;
    while (n.endsWith(QLatin1Char('/')))
        n.chop(1);
    return n.section(QLatin1Char('/'), -1);
}

QString KernelRecord::key() const
{
    return folder.isEmpty() ? name : keyOf(folder);
}

} // namespace ak
