#include "kernelrecord.h"

#include "enumnames.h"

namespace ak {

namespace {
// The log's and `status --json`'s names.
constexpr EnumToken<KernelState> kKernelStateNames[] = {
    { KernelState::Waiting, "waiting" },
    { KernelState::Active, "active" },
    { KernelState::Pinned, "pinned" },
    { KernelState::Skipped, "skipped" },
    { KernelState::Done, "done" },
    { KernelState::Unpluggable, "unpluggable" },
};
} // namespace

QString kernelStateName(KernelState s)
{
    return tokenOf(kKernelStateNames, s);
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
