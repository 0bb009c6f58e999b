#include "widgets/reportexport.h"

#include "runreport.h"
#include "services/backgroundjob.h"

#include <QAction>
#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QWidget>

namespace ak {

namespace {

struct Outcome
{
    bool ok = false;
    QString error;
    qint64 ms = 0;
};

} // namespace

ReportExport::ReportExport(QWidget *parent)
    : QObject(parent)
    , m_parent(parent)
    , m_action(new QAction(tr("Export &Report…"), this))
{
    setObjectName(QStringLiteral("ReportExport"));
    m_action->setObjectName(QStringLiteral("ExportReportAction"));
    connect(m_action, &QAction::triggered, this, &ReportExport::chooseFile);
    updateAction();
}

void ReportExport::setRunDir(const QString &runDir)
{
    m_runDir = runDir;
    updateAction();
}

void ReportExport::chooseFile()
{
    if (m_runDir.isEmpty())
        return;
    const QString suggested
        = QDir(m_runDir).filePath(QFileInfo(m_runDir).fileName() + QStringLiteral("-report.html"));
    const QString file
        = QFileDialog::getSaveFileName(m_parent, tr("Export Report"), suggested, tr("HTML (*.html)"));
    if (!file.isEmpty())
        exportTo(file);
}

bool ReportExport::exportTo(const QString &file)
{
    if (m_runDir.isEmpty() || m_exporting)
        return false;
    m_exporting = true;
    updateAction();
    // A 10k-experiment run reads its whole log and history: never on the GUI thread.
    runInBackground(
        this,
        [dir = m_runDir, file] {
            Outcome o;
            QElapsedTimer clock;
            clock.start();
            o.ok = RunReport::write(dir, file, &o.error);
            o.ms = clock.elapsed();
            return o;
        },
        [this, file](const Outcome &o) {
            m_exporting = false;
            updateAction();
            Q_EMIT finished(o.ok,
                o.ok ? tr("report written to %1 (%2 ms)").arg(QDir::toNativeSeparators(file)).arg(o.ms)
                     : tr("report: %1").arg(o.error));
        });
    return true;
}

void ReportExport::updateAction()
{
    m_action->setEnabled(!m_runDir.isEmpty() && !m_exporting);
    m_action->setToolTip(m_runDir.isEmpty() ? tr("Export Report — open a run first")
            : m_exporting                   ? tr("Export Report — writing the report…")
                          : QStringLiteral("The run as one HTML file to share: summary, kernels, charts, the "
                                           "model's verification, kept diffs (autokernel-cli report)"));
}

} // namespace ak
