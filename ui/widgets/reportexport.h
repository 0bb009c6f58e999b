#pragma once

#include <QObject>
#include <QString>

class QAction;

namespace ak {

// File ▸ Export Report…: the open run as one self-contained HTML file (core/runreport, the same file
// `autokernel-cli report` writes), written off the GUI thread. One export at a time; the outcome
// leaves through finished() for the log.
class ReportExport : public QObject
{
    Q_OBJECT
public:
    explicit ReportExport(QWidget *parent);

    QAction *action() const { return m_action; }
    void setRunDir(const QString &runDir); // empty: no run open (the action is disabled)

    // Asks for a file (QFileDialog), then exportTo().
    void chooseFile();
    // False when no run is open or an export is running.
    bool exportTo(const QString &file);
    bool isExporting() const { return m_exporting; }

Q_SIGNALS:
    void finished(bool ok, const QString &message);

private:
    void updateAction();

    QWidget *m_parent;
    QAction *m_action;
    QString m_runDir;
    bool m_exporting = false;
};

} // namespace ak
