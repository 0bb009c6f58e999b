#pragma once

#include "experiment.h"
#include "runsnapshot.h"

#include <QTabWidget>

#include <functional>

class QPlainTextEdit;

namespace ak {

class DiffView;

// The bottom right of the workspace: the selected experiment's change to kernel.py (Diff) and,
// beside it, what the agent answered to produce it (Agent Reply), or two experiments compared. The
// commits are read off the GUI thread; only the latest request is shown, so that a slow read never
// lands over a newer selection.
class ExperimentDetails : public QTabWidget
{
    Q_OBJECT
public:
    // Reads a file at a commit of the run's git repository (GitRepo::readBlob by default).
    using BlobReader = std::function<QByteArray(
        const QString &runDir, const QString &commit, const QString &path, QString *error)>;

    // kernel.py at `older` (none when empty: the text is "") and at `newer`, read with `reader`, off
    // the GUI thread; `error` names the file and the commit that could not be read.
    struct TextPair
    {
        QString oldText;
        QString newText;
        QString error;
    };
    static TextPair readTexts(const BlobReader &reader, const QString &runDir, const QString &older,
        const QString &newer, const QString &path);
    // kernel.py of `kernel` in the run's tree (its folder as profiled).
    static QString kernelPyPath(const RunSnapshot *run, const QString &kernel);

    explicit ExperimentDetails(QWidget *parent = nullptr);

    void setBlobReader(BlobReader reader) { m_blobReader = std::move(reader); }
    DiffView *diffView() const { return m_diffView; }

    // `e`'s change to kernel.py and the agent's reply (when the run kept one), of the run `run`.
    void showExperiment(const RunSnapshot &run, const Experiment &e);
    // `older` against `newer`; false (and nothing shown) while either has no commit yet.
    bool compare(const RunSnapshot &run, const Experiment &older, const Experiment &newer);
    // "No commit selected"; a load still under way is dropped (it belongs to an earlier selection).
    void showNoSelection();

Q_SIGNALS:
    void message(const QString &text); // a commit could not be read: for the log

private:
    // A load under way is not shown when it arrives.
    void dropPending() { ++m_generation; }
    void showReply(const Experiment &e, const QString &reply);

    BlobReader m_blobReader;
    quint64 m_generation = 0;
    DiffView *m_diffView;
    QPlainTextEdit *m_replyView;
};

} // namespace ak
