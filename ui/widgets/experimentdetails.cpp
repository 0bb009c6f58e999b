#include "widgets/experimentdetails.h"

#include "runstore.h"
#include "services/backgroundjob.h"
#include "widgets/diffview.h"

#include <QPlainTextEdit>

namespace ak {

namespace {

struct DiffTexts
{
    ExperimentDetails::TextPair texts;
    QString reply; // the agent's raw answer, when the run kept one (RunStore::attachReply)
};

} // namespace

ExperimentDetails::ExperimentDetails(QWidget *parent)
    : QTabWidget(parent)
{
    setObjectName(QStringLiteral("ExperimentDetailTabs"));
    m_diffView = new DiffView(this);
    m_replyView = new QPlainTextEdit(this);
    m_replyView->setObjectName(QStringLiteral("AgentReplyView"));
    m_replyView->setReadOnly(true);
    m_replyView->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    m_replyView->setPlaceholderText(tr("The agent's reply to the selected experiment appears here."));
    addTab(m_diffView, tr("Diff"));
    addTab(m_replyView, tr("Agent Reply"));

    m_blobReader = [](const QString &, const QString &, const QString &, QString *error) {
        *error = tr("no git reader configured");
        return QByteArray();
    };
}

QString ExperimentDetails::kernelPyPath(const RunSnapshot *run, const QString &kernel)
{
    const KernelRecord *k = run ? run->kernel(kernel) : nullptr;
    const QString folder = k ? k->folder : QStringLiteral("kernels/%1").arg(kernel);
    return QStringLiteral("%1/kernel.py").arg(folder);
}

ExperimentDetails::TextPair ExperimentDetails::readTexts(const BlobReader &reader, const QString &runDir,
    const QString &older, const QString &newer, const QString &path)
{
    TextPair t;
    for (const auto &[commit, text] : { std::pair { newer, &t.newText }, std::pair { older, &t.oldText } }) {
        if (commit.isEmpty())
            continue;
        QString err;
        *text = QString::fromUtf8(reader(runDir, commit, path, &err));
        if (!err.isEmpty()) {
            t.error = tr("%1 at %2: %3").arg(path, commit.left(8), err);
            break;
        }
    }
    return t;
}

void ExperimentDetails::showNoSelection()
{
    // A read still in flight belongs to what was selected before (another kernel, another run): it
    // must not land over this.
    dropPending();
    m_replyView->clear();
    m_diffView->showMessage(tr("No commit selected"),
        tr("Select an experiment in the commit list to see its change to kernel.py."));
}

void ExperimentDetails::showExperiment(const RunSnapshot &run, const Experiment &e)
{
    if (e.commit.isEmpty()) {
        m_diffView->showMessage(tr("Experiment %1 has no commit yet").arg(e.id),
            tr("It is still running; its change appears when it is committed."));
        return;
    }
    const QString path = kernelPyPath(&run, e.kernel);
    const quint64 generation = ++m_generation;
    m_diffView->showMessage(tr("Loading experiment %1…").arg(e.id), QString());
    runInBackground(
        this,
        [reader = m_blobReader, dir = run.runDir, e, path] {
            DiffTexts t;
            t.texts = readTexts(reader, dir, e.parent, e.commit, path);
            if (!t.texts.error.isEmpty())
                return t;
            QString replyError; // a run without replies (older, or the tune agent's) is not an error
            t.reply = QString::fromUtf8(RunStore::readReply(dir, e.id, &replyError));
            return t;
        },
        [this, generation, e, path](const DiffTexts &d) {
            if (generation != m_generation)
                return;
            showReply(e, d.reply);
            const TextPair &t = d.texts;
            if (!t.error.isEmpty()) {
                m_diffView->showMessage(tr("Cannot read kernel.py of experiment %1").arg(e.id), t.error);
                Q_EMIT message(tr("diff of experiment %1: %2").arg(e.id).arg(t.error));
                return;
            }
            const QString oldTitle = e.parent.isEmpty()
                ? tr("(no parent)")
                : QStringLiteral("%1 @ %2").arg(path, e.parent.left(8));
            m_diffView->showTexts(
                t.oldText, t.newText, oldTitle, tr("experiment %1 @ %2").arg(e.id).arg(e.commit.left(8)));
        });
}

bool ExperimentDetails::compare(const RunSnapshot &run, const Experiment &older, const Experiment &newer)
{
    if (older.commit.isEmpty() || newer.commit.isEmpty())
        return false;
    const QString path = kernelPyPath(&run, newer.kernel);
    const quint64 generation = ++m_generation;
    m_diffView->showMessage(tr("Loading experiments %1 and %2…").arg(older.id).arg(newer.id), QString());
    runInBackground(
        this,
        [reader = m_blobReader, dir = run.runDir, older, newer, path] {
            return readTexts(reader, dir, older.commit, newer.commit, path);
        },
        [this, generation, older, newer](const TextPair &t) {
            if (generation != m_generation)
                return;
            if (!t.error.isEmpty()) {
                m_diffView->showMessage(
                    tr("Cannot compare experiments %1 and %2").arg(older.id).arg(newer.id), t.error);
                return;
            }
            m_diffView->showTexts(t.oldText, t.newText,
                tr("experiment %1 (%2) @ %3")
                    .arg(older.id)
                    .arg(statusText(older.status), older.commit.left(8)),
                tr("experiment %1 (%2) @ %3")
                    .arg(newer.id)
                    .arg(statusText(newer.status), newer.commit.left(8)));
        });
    return true;
}

void ExperimentDetails::showReply(const Experiment &e, const QString &reply)
{
    m_replyView->setPlainText(reply);
    if (reply.isEmpty())
        m_replyView->setPlaceholderText(
            tr("No reply kept for experiment %1 (the tune agent and the baseline have none).").arg(e.id));
}

} // namespace ak
