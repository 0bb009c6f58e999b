#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

class QFileSystemWatcher;
class QTimer;

namespace ak {

// Tells a reader (the GUI) that another process changed a run directory. Watches the directory and
// experiments.jsonl with QFileSystemWatcher and, because inotify misses changes on network file
// systems and loses a file that is replaced by rename, also polls size and modification time of the
// files the loader reads. Bursts (begin + finish + best) are coalesced into one changed().
class RunWatcher : public QObject
{
    Q_OBJECT
public:
    explicit RunWatcher(const QString &runDir, QObject *parent = nullptr);
    ~RunWatcher() override;

    QString runDir() const { return m_dir; }
    void setPollInterval(int ms);
    void setDebounce(int ms);

Q_SIGNALS:
    void changed();

private:
    QString signature() const;
    void rewatch();
    void onPossibleChange();
    void poll();

    QString m_dir;
    QString m_signature;
    QFileSystemWatcher *m_watcher;
    QTimer *m_pollTimer;
    QTimer *m_debounce;
};

} // namespace ak
