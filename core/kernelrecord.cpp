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
    }
    return QString();
}

} // namespace ak
