#include "loop/recordedrun.h"

#include "gitrepo.h"
#include "runloader.h"
#include "runstore.h"

namespace ak {

QVector<RecordedProposal> readRecordedProposals(const QString &runDir, QString *error)
{
    QVector<RecordedProposal> out;
    const RunSnapshotPtr run = RunLoader::load(runDir, error);
    if (!run)
        return out;
    std::unique_ptr<GitRepo> repo = GitRepo::open(runDir, error);
    if (!repo)
        return out;
    for (const Experiment &e : run->experiments) {
        if (e.status == ExperimentStatus::Baseline || e.agent == QLatin1String("user") || e.commit.isEmpty())
            continue;
        const QString path = RunStore::kernelPath(e.kernel);
        const QString blob = repo->blobIdAt(e.commit, path);
        if (blob.isEmpty() || (!e.parent.isEmpty() && repo->blobIdAt(e.parent, path) == blob))
            continue; // nothing was proposed (an agent error records the unchanged file)
        RecordedProposal p;
        p.kernel = e.kernel;
        p.kernelPy = QString::fromUtf8(repo->readBlobById(blob));
        p.description = e.description;
        p.agent = e.agent;
        out.push_back(p);
    }
    if (out.isEmpty() && error)
        *error = QStringLiteral("%1 holds no recorded proposals").arg(runDir);
    return out;
}

} // namespace ak
