#pragma once

#include "runsnapshot.h"

#include <QDateTime>
#include <QString>

namespace ak {

class GitRepo;

// A run as one self-contained HTML file to share without the window (`autokernel-cli report`, and
// File ▸ Export Report… in the window): the summary (projected and measured model speedup, outcome
// counts), the ranked kernel table, a chart per kernel and the model's in-model effects as inline
// SVG, each kernel's kept change as a diff against its baseline, and the environment. No script, no
// external file: it opens in any browser, and it is well-formed XML so tests can parse it back.
class RunReport
{
public:
    // `repo` reads the kernels' sources for the diffs; nullptr leaves the diffs out with a note.
    static QString html(const RunSnapshot &run, const GitRepo *repo, const QDateTime &generated);

    // Loads runDir (the same loader as the window), writes the report to outFile atomically.
    static bool write(const QString &runDir, const QString &outFile, QString *error);

private:
    static QString summary(const RunSnapshot &run);
    static QString kernelTable(const RunSnapshot &run);
    static QString charts(const RunSnapshot &run);
    static QString model(const RunSnapshot &run);
    static QString diffs(const RunSnapshot &run, const GitRepo *repo);
    static QString environment(const RunSnapshot &run);
};

} // namespace ak
