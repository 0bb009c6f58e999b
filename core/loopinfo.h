#pragma once

#include <QDateTime>
#include <QString>

#include <optional>

namespace ak {

// What a loop started from the CLI (`autokernel-cli run`) tells the windows watching its run:
// its budget and agent, in .git/autokernel-loop.json, written when it starts and removed when it
// ends. The experiments say what the agent spent; only the loop knows when it will stop and who
// proposes, and a window could not otherwise show "budget left" or the agent of a loop it did not
// start.
struct LoopInfo
{
    qint64 pid = 0;
    QDateTime started; // UTC
    QDateTime deadline; // UTC; invalid without a time budget
    int maxExperiments = 0; // 0 = no limit
    QString agent; // "tune", "llm (gpt-4.1)", "command", "replay"

    static QString path(const QString &runDir);
    bool write(const QString &runDir, QString *error = nullptr) const;
    static void remove(const QString &runDir);
    // Nothing when the file is missing or unreadable (a window shows less, never an error).
    static std::optional<LoopInfo> read(const QString &runDir);

    // "12 min left", "1 h 5 min left", "budget spent"; empty without a deadline.
    QString budgetLeftText(const QDateTime &now) const;
    bool operator==(const LoopInfo &o) const
    {
        return pid == o.pid && started == o.started && deadline == o.deadline
            && maxExperiments == o.maxExperiments && agent == o.agent;
    }
};

} // namespace ak
