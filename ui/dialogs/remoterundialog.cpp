#include "dialogs/remoterundialog.h"

#include "shellwords.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

namespace ak {

namespace {

const char *const kSshKey = "remote/ssh";
const char *const kCliKey = "remote/cli";
const char *const kLastKey = "remote/lastAddress";

// Words of a command field; empty when blank or when its quotes do not close (validate() says so).
QStringList words(const QString &text, QChar *unclosed)
{
    return shellwords::split(text.trimmed(), unclosed);
}

} // namespace

RemoteRunDialog::RemoteRunDialog(QWidget *parent)
    : QDialog(parent)
    , m_address(new QLineEdit(this))
    , m_ssh(new QLineEdit(this))
    , m_cli(new QLineEdit(this))
    , m_problem(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setWindowTitle(tr("Open Remote Run"));
    QSettings settings;
    m_address->setObjectName(QStringLiteral("remoteAddress"));
    m_address->setPlaceholderText(QStringLiteral("ssh://gpu1/~/runs/llama"));
    m_address->setText(settings.value(QLatin1String(kLastKey)).toString());
    m_address->setToolTip(tr("ssh://[user@]host[:port]/path/to/run — a path starting with /~/ is in "
                             "your home there"));
    m_ssh->setObjectName(QStringLiteral("remoteSsh"));
    m_ssh->setPlaceholderText(tr("ssh (with ~/.ssh/config)"));
    m_ssh->setText(settings.value(QLatin1String(kSshKey)).toString());
    m_cli->setObjectName(QStringLiteral("remoteCli"));
    m_cli->setPlaceholderText(QStringLiteral("autokernel-cli"));
    m_cli->setText(settings.value(QLatin1String(kCliKey)).toString());
    m_cli->setToolTip(tr("How autokernel-cli runs there; for an unpacked bundle, e.g. "
                         "env LD_LIBRARY_PATH=/opt/ak/lib /opt/ak/bin/autokernel-cli"));
    m_problem->setObjectName(QStringLiteral("remoteProblem"));
    m_problem->setWordWrap(true);

    auto *form = new QFormLayout;
    form->addRow(tr("&Address:"), m_address);
    form->addRow(tr("&ssh command:"), m_ssh);
    form->addRow(tr("autokernel-cli &there:"), m_cli);
    auto *note = new QLabel(tr("The run is copied into a local cache with rsync over ssh and followed "
                               "live; steering runs autokernel-cli there. The loop itself runs on that "
                               "machine. This machine needs rsync; that one needs it only when "
                               "autokernel-cli there is not the bundle's, which has its own rsync beside "
                               "it. ssh must log in without a password prompt (a key or ssh-agent)."),
        this);
    note->setWordWrap(true);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(note);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);
    connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
        saveSettings();
        accept();
    });
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    for (QLineEdit *edit : { m_address, m_ssh, m_cli })
        connect(edit, &QLineEdit::textChanged, this, &RemoteRunDialog::validate);
    validate();
}

void RemoteRunDialog::validate()
{
    const QString address = m_address->text().trimmed();
    QString parseError;
    QChar sshQuote;
    QChar cliQuote;
    words(m_ssh->text(), &sshQuote);
    words(m_cli->text(), &cliQuote);
    QString error;
    if (address.isEmpty())
        error = tr("Address: type the run's ssh:// address.");
    else if (!RemoteRun::parse(address, &parseError).isValid())
        error = tr("Address: %1").arg(parseError);
    else if (!sshQuote.isNull())
        error = tr("ssh command: a %1 quote is not closed.").arg(sshQuote);
    else if (!cliQuote.isNull())
        error = tr("autokernel-cli there: a %1 quote is not closed.").arg(cliQuote);
    m_problemText = error;
    m_problem->setText(error);
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(error.isEmpty());
}

RemoteRun RemoteRunDialog::remoteRun() const
{
    if (!m_problemText.isEmpty())
        return RemoteRun();
    RemoteRun run = RemoteRun::parse(m_address->text().trimmed(), nullptr);
    QChar unclosed;
    if (const QStringList ssh = words(m_ssh->text(), &unclosed); !ssh.isEmpty())
        run.setSsh(ssh);
    if (const QStringList cli = words(m_cli->text(), &unclosed); !cli.isEmpty())
        run.setRemoteCli(cli);
    return run;
}

void RemoteRunDialog::saveSettings() const
{
    QSettings settings;
    settings.setValue(QLatin1String(kLastKey), m_address->text().trimmed());
    settings.setValue(QLatin1String(kSshKey), m_ssh->text().trimmed());
    settings.setValue(QLatin1String(kCliKey), m_cli->text().trimmed());
}

void RemoteRunDialog::applySettings(RemoteRun *run)
{
    QSettings settings;
    QChar unclosed;
    if (const QStringList ssh = words(settings.value(QLatin1String(kSshKey)).toString(), &unclosed);
        !ssh.isEmpty() && unclosed.isNull())
        run->setSsh(ssh);
    if (const QStringList cli = words(settings.value(QLatin1String(kCliKey)).toString(), &unclosed);
        !cli.isEmpty() && unclosed.isNull())
        run->setRemoteCli(cli);
}

} // namespace ak
