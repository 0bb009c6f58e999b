#include "buildinfo.h"

#include "gitrevision.h" // generated at build time by cmake/gitrevision.cmake

namespace ak {

QString BuildInfo::version()
{
    return QStringLiteral(AUTOKERNEL_VERSION);
}

QString BuildInfo::revision()
{
    return QStringLiteral(AUTOKERNEL_GIT_REVISION);
}

QString BuildInfo::versionLine(const QString &program)
{
    return QStringLiteral("%1 %2 (git %3)").arg(program, version(), revision());
}

} // namespace ak
