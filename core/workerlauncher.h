#pragma once

#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace ak {

// How a worker is started somewhere else: a command prefix the user already trusts, such as
// `ssh gpu1` or `srun --partition=gpu --gpus=1 --ntasks=1`, in front of `python -u -c <bootstrap>`.
// Nothing is assumed shared with that machine: the bootstrap (core/python/akboot.py) fetches the
// worker's files over the protocol channel when its cache there lacks them, and each bench carries
// its kernel.py in the request (docs/remote.md). Empty: the worker is a local child process.
//
// ssh joins its arguments into one line for the remote shell, so for ssh the remote command is
// passed as one quoted string; any other launcher gets the words as they are (srun, env, docker exec
// run them without a shell). ssh also gets BatchMode (a password prompt would hang the start-up
// until its timeout) and keep-alives (a dropped network shows within a minute), unless the user's
// words set them.
class WorkerLauncher
{
public:
    WorkerLauncher() = default;
    explicit WorkerLauncher(const QStringList &prefix);

    // Parses a launcher typed by a person: words split like a POSIX shell splits them. An empty text
    // is the local launcher; unbalanced quotes give an error naming them.
    static WorkerLauncher parse(const QString &text, QString *error);

    bool isLocal() const { return m_prefix.isEmpty(); }
    bool isSsh() const;
    bool isSrun() const; // Slurm pins each step's GPUs itself: no CUDA_VISIBLE_DEVICES from us
    QStringList prefix() const { return m_prefix; }
    QString text() const; // the words as a person would type them again

    // The options ssh gets from us unless `sshWords` set them: BatchMode (a password prompt would hang
    // the caller until its timeout) and keep-alives (a dropped network shows within a minute).
    static QStringList sshDefaults(const QStringList &sshWords);
    // Whether one of the words sets ssh's `option` (-o Option=..., case as ssh ignores it).
    static bool setsOption(const QStringList &sshWords, const QString &option);

    // The full command (program first) that runs `remoteWords` through this launcher.
    QStringList command(const QStringList &remoteWords) const;

    // The environment of the local launcher process: the worker's (secrets removed), plus for ssh
    // the agent socket ssh authenticates with (it never reaches the remote side).
    QProcessEnvironment localEnvironment(const QProcessEnvironment &workerEnv) const;

    // The variables the remote worker needs from the coordinator, as the bootstrap's ENV argument.
    static QByteArray forwardedEnvironment(const QProcessEnvironment &workerEnv);

    // Why the launcher ended, in words: ssh's 255 is a connection that failed or dropped.
    QString describeExit(int exitCode, bool crashed) const;

private:
    QStringList m_prefix;
};

} // namespace ak
