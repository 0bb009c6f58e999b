#include "examplerunstarter.h"

#include "dialogs/newrundialog.h"

#include <QAction>
#include <QFileInfo>
#include <QStringList>
#include <QWidget>

namespace ak {

namespace {

// How the log and the status bar name a run being prepared: "example gpt2", "new run tiny.py".
QString creationLabel(const ExampleRun::Options &o)
{
    if (!o.recording.isEmpty())
        return ExampleRunStarter::tr("recording %1").arg(o.name);
    return o.model.isEmpty() ? ExampleRunStarter::tr("example %1").arg(o.name)
                             : ExampleRunStarter::tr("new run %1").arg(QFileInfo(o.model).fileName());
}

// How a title names it: "the gpt2 example run", "a run of tiny.py".
QString creationTitle(const ExampleRun::Options &o)
{
    if (!o.recording.isEmpty())
        return ExampleRunStarter::tr("the %1 recording").arg(o.name);
    return o.model.isEmpty() ? ExampleRunStarter::tr("the %1 example run").arg(o.name)
                             : ExampleRunStarter::tr("a run of %1").arg(QFileInfo(o.model).fileName());
}

} // namespace

ExampleRunStarter::ExampleRunStarter(QWidget *parent)
    : QObject(parent)
    , m_parent(parent)
    , m_cancel(new QAction(tr("&Cancel Profiling"), this))
{
    m_cancel->setObjectName(QStringLiteral("CancelProfilingAction"));
    m_cancel->setEnabled(false);
    connect(m_cancel, &QAction::triggered, this, [this] {
        if (m_job)
            m_job->cancel();
    });
}

QString ExampleRunStarter::noRunHint()
{
    // On a machine without a GPU the examples profile on the CPU; the recordings show what a GPU run
    // looks like, so the first view can show the product doing its job anywhere.
    QStringList recordings;
    for (const QString &name : ExampleRun::recordings())
        recordings << tr("%1 (recording)").arg(name);
    const QString watch = recordings.isEmpty()
        ? QString()
        : tr(" To watch a real GPU run recorded elsewhere: Help ▸ Open Example Run ▸ %1.")
              .arg(recordings.join(tr(" or ")));
    return tr("Profile your model (File ▸ New Run…), open a run directory (File ▸ Open Run…) or one on "
              "another machine (File ▸ Open Remote Run…), or try a bundled example (Help ▸ Open Example "
              "Run).%1 From a shell:\nautokernel-cli profile --model model.py --out RUN_DIR")
        .arg(watch);
}

void ExampleRunStarter::open(const QString &name)
{
    ExampleRun::Options options;
    options.name = name;
    if (!ExampleRun::names().contains(name) && ExampleRun::recordings().contains(name))
        options.recording = ExampleRun::recordingPath(name);
    open(options);
}

void ExampleRunStarter::open(const ExampleRun::Options &options)
{
    if (options.model.isEmpty() && options.recording.isEmpty()
        && !ExampleRun::names().contains(options.name)) {
        ExampleRun::Result unknown;
        unknown.error = tr("There is no bundled example called '%1'; the examples are: %2.")
                            .arg(options.name, ExampleRun::names().join(QStringLiteral(", ")));
        finish(options, unknown, m_opens);
        return;
    }
    delete m_job; // another run asked for: the earlier creation is cancelled
    auto *job = new ExampleRun(options, this);
    m_job = job;
    m_cancel->setEnabled(true);
    Q_EMIT creatingChanged(true);
    connect(job, &ExampleRun::progress, this, [this, options](const QString &m) { progress(options, m); });
    connect(
        job, &ExampleRun::finished, this, [this, job, options, opens = m_opens](const ExampleRun::Result &r) {
            job->deleteLater();
            if (m_job == job) {
                m_job = nullptr;
                m_cancel->setEnabled(false);
                Q_EMIT creatingChanged(false);
            }
            finish(options, r, opens);
        });
    progress(options, options.model.isEmpty() ? tr("looking for its run") : tr("starting"));
    m_job->start();
}

void ExampleRunStarter::newRun()
{
    NewRunDialog dialog(m_parent);
    if (m_failedModelRun)
        dialog.offerAgain(*m_failedModelRun);
    if (dialog.exec() == QDialog::Accepted)
        open(dialog.options());
}

void ExampleRunStarter::progress(const ExampleRun::Options &options, const QString &message)
{
    const QString label = creationLabel(options);
    Q_EMIT this->message(LogView::Level::Info, QStringLiteral("%1: %2").arg(label, message));
    Q_EMIT statusMessage(QStringLiteral("%1: %2…").arg(label, message), 0);
    Q_EMIT explanation(tr("Preparing %1").arg(creationTitle(options)),
        options.model.isEmpty()
            ? QStringLiteral("%1…\n\nThe first time, the model is profiled on this machine (usually under "
                             "a minute); afterwards the example opens at once.")
                  .arg(message)
            : tr("%1…\n\nThe model is profiled on this machine, then its run opens.").arg(message));
}

void ExampleRunStarter::finish(
    const ExampleRun::Options &options, const ExampleRun::Result &r, quint64 opensAtStart)
{
    const QString label = creationLabel(options);
    if (!options.model.isEmpty()) {
        if (r.ok)
            m_failedModelRun.reset();
        else
            m_failedModelRun = options;
    }
    if (!r.ok) {
        const bool cancelled = r.error == QLatin1String("cancelled");
        Q_EMIT message(cancelled ? LogView::Level::Info : LogView::Level::Error,
            QStringLiteral("%1: %2").arg(label, r.error));
        if (!r.details.isEmpty())
            Q_EMIT message(LogView::Level::Error, r.details);
        Q_EMIT statusMessage(
            QStringLiteral("%1: %2").arg(label, r.error.section(QLatin1Char('\n'), 0, 0)), 15000);
        if (cancelled)
            Q_EMIT explanation(tr("Profiling cancelled"), noRunHint());
        else
            Q_EMIT explanation(tr("Could not prepare %1").arg(creationTitle(options)),
                QStringLiteral("%1%2\n\n%3")
                    .arg(r.error, r.details.isEmpty() ? QString() : tr("\n(the log has the details)"),
                        noRunHint()));
        Q_EMIT failed(options.name, r.error);
        return;
    }
    Q_EMIT message(LogView::Level::Info,
        QStringLiteral("%1: %2 %3")
            .arg(label, r.created ? QStringLiteral("created") : QStringLiteral("found"), r.runDir));
    if (opensAtStart != m_opens) { // the user opened another run meanwhile: do not take it away
        Q_EMIT statusMessage(tr("%1 is ready: %2").arg(label, r.runDir), 10000);
        return;
    }
    Q_EMIT ready(r.runDir);
}

} // namespace ak
