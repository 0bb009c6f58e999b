#pragma once

#include "remoterun.h"

#include <QDialog>

class QDialogButtonBox;
class QLabel;
class QLineEdit;

namespace ak {

// File ▸ Open Remote Run…: the run's ssh:// address, and how to reach it — the ssh command (empty:
// $AUTOKERNEL_SSH, else plain ssh with ~/.ssh/config) and the autokernel-cli command on that machine
// (empty: $AUTOKERNEL_REMOTE_CLI, else autokernel-cli on its PATH). The two commands are remembered
// (QSettings "remote/ssh", "remote/cli") for the next remote run, including one opened from the
// command line or the recent list. OK stays disabled while the address does not parse; the line
// under the form says why.
class RemoteRunDialog : public QDialog
{
    Q_OBJECT
public:
    explicit RemoteRunDialog(QWidget *parent = nullptr);

    // The address with the remembered (or typed) commands applied; invalid while problem() is set.
    RemoteRun remoteRun() const;
    QString problem() const { return m_problemText; }
    QLineEdit *addressEdit() const { return m_address; }
    QLineEdit *sshEdit() const { return m_ssh; }
    QLineEdit *cliEdit() const { return m_cli; }

    // Applies the remembered ssh and CLI commands to `run` (what RemoteRunDialog saved last).
    static void applySettings(RemoteRun *run);
    void saveSettings() const;

private:
    void validate();

    QLineEdit *m_address;
    QLineEdit *m_ssh;
    QLineEdit *m_cli;
    QLabel *m_problem;
    QDialogButtonBox *m_buttons;
    QString m_problemText;
};

} // namespace ak
