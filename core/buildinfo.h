#pragma once

#include <QString>

namespace ak {

// What the binaries were built from, for --version, Help ▸ About and `autokernel-cli doctor`.
class BuildInfo
{
public:
    static QString version(); // "0.1.0" (CMake's PROJECT_VERSION)
    static QString revision(); // "89eea25a1b2c": the git commit built, "unknown" outside a checkout
    // "autokernel-cli 0.1.0 (git 89eea25a1b2c)"
    static QString versionLine(const QString &program);
};

} // namespace ak
