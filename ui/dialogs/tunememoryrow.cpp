#include "dialogs/tunememoryrow.h"

#include "widgets/errortint.h"
#include "widgets/wrappedlabel.h"

#include <QDir>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QPushButton>
#include <QSet>
#include <QVBoxLayout>

#include <algorithm>

namespace ak {

namespace {

// The path as a user would type it: ~ for the home folder (the default is under ~/.cache).
QString tuneMemoryShownPath(const QString &path)
{
    const QString home = QDir::homePath() + QLatin1Char('/');
    const QString clean = QDir::cleanPath(path);
#ifndef Q_OS_WIN
    if (clean.startsWith(home))
        return QStringLiteral("~/") + clean.mid(home.size());
#endif
    return QDir::toNativeSeparators(clean);
}

QString plural(int n, const char *one, const char *many)
{
    return QStringLiteral("%1 %2").arg(n).arg(QLatin1String(n == 1 ? one : many));
}

} // namespace

TuneMemoryRow::TuneMemoryRow(QWidget *parent)
    : QWidget(parent)
    , m_summary(wrappedLabel(QString(), this, QStringLiteral("tuneMemory")))
    , m_forget(new QPushButton(tr("Forget…"), this))
    , m_error(wrappedLabel(QString(), this, QStringLiteral("tuneMemoryError")))
{
    m_summary->setToolTip(
        QStringLiteral("Each configuration a run kept is remembered by device, op type, dtype and shapes; "
                       "the tune agent of the next run on the same device tries the best of its op early. "
                       "$AUTOKERNEL_TUNE_MEMORY names another file, or \"none\" to turn it off."));
    m_forget->setObjectName(QStringLiteral("forgetTuneMemory"));
    m_forget->setToolTip(tr("Forget every remembered configuration: the next runs search without them."));
    ErrorTint::apply(m_error);
    m_error->hide();

    auto *line = new QHBoxLayout;
    line->setContentsMargins(0, 0, 0, 0);
    line->addWidget(m_summary, 1);
    line->addWidget(m_forget, 0, Qt::AlignTop);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(line);
    layout->addWidget(m_error);

    m_confirm = [this](const QString &question) {
        return QMessageBox::question(this, tr("Forget Tune Memory"), question,
                   QMessageBox::Yes | QMessageBox::Cancel, QMessageBox::Cancel)
            == QMessageBox::Yes;
    };
    connect(m_forget, &QPushButton::clicked, this, &TuneMemoryRow::forget);
    refresh();
}

QString TuneMemoryRow::summary(const QVector<TuneMemory::Entry> &entries, const QString &path)
{
    if (path.isEmpty())
        return QStringLiteral("Tune memory: off ($AUTOKERNEL_TUNE_MEMORY=none): runs neither remember kept "
                              "configurations nor try earlier ones.");
    if (entries.isEmpty())
        return QStringLiteral("Tune memory: empty — %1").arg(tuneMemoryShownPath(path));
    QSet<QString> runs;
    QStringList devices;
    for (const TuneMemory::Entry &e : entries) {
        runs.insert(e.runDir);
        if (!e.device.isEmpty() && !devices.contains(e.device))
            devices << e.device;
    }
    devices.sort(Qt::CaseInsensitive);
    // A long list of devices would push the path out of sight; three name the machine well enough.
    constexpr int shownDevices = 3;
    QString deviceText = devices.mid(0, shownDevices).join(QStringLiteral(", "));
    if (devices.size() > shownDevices)
        deviceText += QStringLiteral(", …");
    return QStringLiteral("Tune memory: %1 from %2 on this machine%3 — %4")
        .arg(plural(int(entries.size()), "configuration", "configurations"),
            plural(int(runs.size()), "run", "runs"),
            deviceText.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(deviceText),
            tuneMemoryShownPath(path));
}

void TuneMemoryRow::refresh()
{
    const QString path = TuneMemory::path();
    const QVector<TuneMemory::Entry> entries
        = path.isEmpty() ? QVector<TuneMemory::Entry>() : TuneMemory::all();
    m_count = int(entries.size());
    m_summary->setText(summary(entries, path));
    // Off: nothing to forget and nothing will be remembered; empty: nothing to forget yet.
    m_forget->setEnabled(!path.isEmpty() && m_count > 0);
}

void TuneMemoryRow::forget()
{
    const QString path = TuneMemory::path();
    if (path.isEmpty())
        return;
    const QString question
        = QStringLiteral("Forget the %1 the tune agent kept in earlier runs on this machine? The next runs "
                         "start their search without them.\n\n%2 is deleted.")
              .arg(plural(m_count, "configuration", "configurations"), QDir::toNativeSeparators(path));
    if (m_confirm && !m_confirm(question))
        return;
    QString error;
    const bool cleared = TuneMemory::clear(&error);
    m_error->setText(cleared ? QString() : tr("Could not forget the tune memory: %1").arg(error));
    m_error->setVisible(!cleared);
    refresh();
    Q_EMIT resized();
}

QString TuneMemoryRow::errorText() const
{
    return m_error->text();
}

} // namespace ak
