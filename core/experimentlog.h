#pragma once

#include "experiment.h"
#include "kernelrecord.h"
#include "moveonrules.h"

#include <nlohmann/json_fwd.hpp>

#include <QByteArray>
#include <QDateTime>
#include <QString>
#include <QStringList>
#include <QVector>

namespace ak {

// One line of experiments.jsonl. The log is append-only: an experiment appears once when it starts
// and again each time its status changes (the last line for an id wins); steering actions on a
// kernel and run-wide switches are lines of their own. See docs/run-format.md.
struct LogEntry
{
    enum class Type { Experiment, Kernel, Run };
    Type type = Type::Experiment;
    QString action; // experiment: begin, finish, accept, reject, revert, baseline, repair
                    // kernel: add, pin, unpin, skip, unskip, done;  run: review, profile, move_on
    int line = 0; // 1-based line in the file (reading only)
    QDateTime time;

    Experiment experiment; // Type::Experiment
    QString head; // set when this record moves the kernel's branch to experiment.commit

    QString kernel; // Type::Kernel: folder name, "01-matmul"
    KernelRecord record; // Type::Kernel, action "add"
    QString reason; // Type::Kernel: why (pin/skip/done), free text

    bool value = false; // Type::Run, action "review"

    // Type::Run, action "move_on": the rules from now on ("value"), who set them ("by") and the git
    // blob id of the run.json the change replaced ("run_json_before"; lets a reader tell a run.json
    // the change has not reached yet from one edited later by hand).
    MoveOnRules moveOn;
    QString by;
    QString runJsonBefore;
};

// Reads and writes experiments.jsonl.
class ExperimentLog
{
public:
    struct ReadResult
    {
        QVector<LogEntry> entries;
        QStringList errors; // "experiments.jsonl:12: <why>", one per bad line (the rest still loads)
        qint64 completeBytes = 0; // bytes up to and including the last newline
        int completeLines = 0; // lines up to and including the last newline
        bool partialTail = false; // bytes after the last newline: a record being written, or torn by a kill
    };

    static QString fileName() { return QStringLiteral("experiments.jsonl"); }
    static ReadResult read(const QString &path);
    // `firstLine`: the line number of data's first line (data read from the middle of the file).
    static ReadResult parse(const QByteArray &data, const QString &displayName, int firstLine = 1);
    // One line, newline included.
    static QByteArray encode(const LogEntry &entry);
    static bool append(const QString &path, const LogEntry &entry, QString *error = nullptr);

    // JSON forms shared with results.tsv and the CLI's --json output.
    static nlohmann::json experimentToJson(const Experiment &e);
    static nlohmann::json metricsToJson(const Metrics &m);
    static nlohmann::json kernelRecordToJson(const KernelRecord &k);
    static QString timeText(const QDateTime &t);
    static QDateTime parseTime(const std::string &text);
};

} // namespace ak
