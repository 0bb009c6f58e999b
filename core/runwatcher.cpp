#include "runwatcher.h"
#include "corelog.h"

#include "experimentlog.h"

#include <QDir>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QTimer>

namespace ak {

namespace {
const char *const kWatchedFiles[]
    = { "experiments.jsonl", "run.json", "profile.json", ".git/refs/heads/best" };
}

RunWatcher::RunWatcher(const QString &runDir, QObject *parent)
    : QObject(parent)
    , m_dir(QDir(runDir).absolutePath())
    , m_watcher(new QFileSystemWatcher(this))
    , m_pollTimer(new QTimer(this))
    , m_debounce(new QTimer(this))
{
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(100);
    connect(m_debounce, &QTimer::timeout, this, [this] {
        const QString now = signature();
        if (now == m_signature)
            return;
        m_signature = now;
        rewatch();
        Q_EMIT changed();
    });
    connect(m_watcher, &QFileSystemWatcher::fileChanged, this, [this] { onPossibleChange(); });
    connect(m_watcher, &QFileSystemWatcher::directoryChanged, this, [this] { onPossibleChange(); });
    m_pollTimer->setInterval(1000);
    connect(m_pollTimer, &QTimer::timeout, this, [this] { poll(); });
    m_signature = signature();
    rewatch();
    m_pollTimer->start();
}

RunWatcher::~RunWatcher() = default;

void RunWatcher::setPollInterval(int ms)
{
    m_pollTimer->setInterval(ms);
}

void RunWatcher::setDebounce(int ms)
{
    m_debounce->setInterval(ms);
}

QString RunWatcher::signature() const
{
    QString s;
    for (const char *name : kWatchedFiles) {
        const QFileInfo fi(QDir(m_dir).filePath(QString::fromLatin1(name)));
        s += QStringLiteral("%1:%2:%3;")
                 .arg(fi.exists() ? fi.size() : -1)
                 .arg(fi.lastModified().toMSecsSinceEpoch())
                 .arg(fi.exists() ? fi.metadataChangeTime().toMSecsSinceEpoch() : 0);
    }
    return s;
}

void RunWatcher::rewatch()
{
    // A file replaced by rename drops out of the watcher; add whatever exists now again.
    QStringList paths { m_dir };
    for (const char *name : kWatchedFiles) {
        const QString p = QDir(m_dir).filePath(QString::fromLatin1(name));
        if (QFileInfo::exists(p))
            paths << p;
    }
    const QStringList watched = m_watcher->files() + m_watcher->directories();
    QStringList missing;
    for (const QString &p : std::as_const(paths))
        if (!watched.contains(p))
            missing << p;
    if (!missing.isEmpty())
        m_watcher->addPaths(missing);
}

void RunWatcher::onPossibleChange()
{
    qCDebug(lcCore) << "possible change in" << m_dir;
    if (!m_debounce->isActive())
        m_debounce->start();
}

void RunWatcher::poll()
{
    if (!m_debounce->isActive() && signature() != m_signature)
        m_debounce->start();
}

} // namespace ak
