#include "clicommand.h"

#include "buildinfo.h"

#include <QTextStream>

namespace ak::cli {

int runBench(const QStringList &args); // bench.cpp
int runProfile(const QStringList &args); // profile.cpp
int runStatus(const QStringList &args); // status.cpp
int runRun(const QStringList &args); // run.cpp
int runPin(const QStringList &args); // steer.cpp
int runUnpin(const QStringList &args); // steer.cpp
int runSkip(const QStringList &args); // steer.cpp
int runRevert(const QStringList &args); // steer.cpp
int runAccept(const QStringList &args); // steer.cpp
int runReject(const QStringList &args); // steer.cpp
int runReview(const QStringList &args); // steer.cpp
int runRules(const QStringList &args); // rules.cpp
int runVerify(const QStringList &args); // verify.cpp
int runExport(const QStringList &args); // export.cpp
int runReproduce(const QStringList &args); // reproduce.cpp
int runReport(const QStringList &args); // report.cpp
int runRecord(const QStringList &args); // record.cpp
int runDoctor(const QStringList &args); // doctor.cpp
int runTuneMemory(const QStringList &args); // tunememory.cpp
int runRestore(const QStringList &args); // record.cpp
int runLlmCheck(const QStringList &args); // llmcheck.cpp

// Subcommands are implemented one per file next to this one; each is a thin layer over a library.
const Command *commands(int *count)
{
    static const Command table[] = {
        { "version", "print the version",
            [](const QStringList &) {
                QTextStream(stdout) << BuildInfo::versionLine(QStringLiteral("autokernel-cli")) << Qt::endl;
                return 0;
            } },
        { "bench", "check and time one kernel.py with the fixed harness", runBench },
        { "profile", "profile a model, rank its kernels by Amdahl's law, create a run", runProfile },
        { "run", "run the optimisation loop on a run directory (resumes where it stopped)", runRun },
        { "status", "show a run directory: kernels, states, outcomes (--json)", runStatus },
        { "pin", "lock a kernel's best: the agent does not touch it again", runPin },
        { "unpin", "let the agent work on a pinned kernel again", runUnpin },
        { "skip", "make the loop pass a kernel (--undo to take it back)", runSkip },
        { "revert", "make an earlier kept experiment a kernel's head again", runRevert },
        { "accept", "keep an experiment pending review", runAccept },
        { "reject", "drop an experiment pending review", runReject },
        { "review", "show or switch review mode (on: keeps wait for accept/reject)", runReview },
        { "rules", "show or change the move-on rules (applied at the loop's next experiment)", runRules },
        { "verify", "put the kept kernels back into the model: parity, timings, the final set", runVerify },
        { "export", "write the verified final set as a standalone Python package", runExport },
        { "reproduce", "re-measure an exported package here and compare with what it recorded",
            runReproduce },
        { "report", "write a run as one self-contained HTML file (summary, charts, diffs)", runReport },
        { "record", "write a run as one text file (files, commits, refs) to restore anywhere", runRecord },
        { "restore", "recreate a run directory from a recording", runRestore },
        { "tune-memory", "list or --clear what the tune agent remembers from earlier runs on this machine",
            runTuneMemory },
        { "doctor", "check this machine first: Python, torch, Triton, GPU, sandbox, embedded Python",
            runDoctor },
        { "llm-check",
            "check the LLM server a run would use: one small request, its models and context length",
            runLlmCheck },
    };
    *count = int(sizeof(table) / sizeof(table[0]));
    return table;
}

int printUsageError(const QString &message)
{
    QTextStream(stderr) << "autokernel-cli: " << message << Qt::endl
                        << "Try 'autokernel-cli --help'." << Qt::endl;
    return 2;
}

} // namespace ak::cli
