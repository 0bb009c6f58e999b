#include "plugcheck.h"

#include "jsonfield.h"
#include "workerclient.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

namespace ak {

namespace {

// The reply's per-kernel entries: a list, or {"kernels": [...]}.
const nlohmann::json *entries(const nlohmann::json &result)
{
    if (result.is_array())
        return &result;
    return jsonfield::array(result, "kernels");
}

} // namespace

void PlugCheck::run(WorkerClient &worker, const ProfileReport &report,
    const std::vector<PlugCandidate> &candidates, QStringList *notes, int timeoutMs)
{
    QTemporaryDir dir;
    if (!dir.isValid()) {
        *notes << QStringLiteral("plug-check skipped: no temporary folder (%1)").arg(dir.errorString());
        return;
    }
    nlohmann::json kernels = nlohmann::json::array();
    for (const PlugCandidate &c : candidates) {
        if (!c.record->contract.refused.isEmpty())
            continue;
        const QString name = KernelRecord::keyOf(c.record->folder);
        const QString path = dir.filePath(name + QStringLiteral(".py"));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(c.kernelPy) != c.kernelPy.size()) {
            *notes << QStringLiteral("plug-check skipped: cannot write %1: %2").arg(path, f.errorString());
            return;
        }
        nlohmann::json sites = nlohmann::json::array();
        for (const QString &s : c.sites)
            sites.push_back(s.toStdString());
        kernels.push_back({ { "name", name.toStdString() }, { "op_type", c.record->opType.toStdString() },
            { "path", path.toStdString() }, { "sites", sites },
            { "callable", c.record->contract.callable.toStdString() } });
    }
    if (kernels.empty())
        return;
    // The profile's dtype as it is: plugcheck.py reads bf16 / fp16 / fp32 itself.
    const nlohmann::json args { { "model_path", report.modelPath.toStdString() },
        { "device", report.activity.toStdString() }, { "dtype", report.dtype.toStdString() },
        { "kernels", kernels }, { "seed", 0 } };
    const WorkerReply reply = worker.request(QStringLiteral("plugcheck"), args, timeoutMs);
    const nlohmann::json *list = reply.ok() ? entries(reply.result) : nullptr;
    if (!list) {
        *notes << QStringLiteral("plug-check did not run (%1): every folder gets budget unchecked")
                      .arg(reply.ok() ? QStringLiteral("the reply has no kernels") : reply.error);
        return;
    }
    int refused = 0;
    for (const nlohmann::json &e : *list) {
        const QString name = jsonfield::text(e, "name");
        if (jsonfield::boolean(e, "pluggable", true))
            continue;
        ++refused;
        QString reason = jsonfield::text(e, "reason");
        if (reason.isEmpty())
            reason = QStringLiteral("the starter could not be plugged into the model");
        for (const PlugCandidate &c : candidates)
            if (KernelRecord::keyOf(c.record->folder) == name)
                c.record->contract.refused = QStringLiteral("plug-check: ") + reason;
    }
    // What it cost, so a user (and docs/benchmarks.md) can weigh it against the run it protects.
    *notes << QStringLiteral("plug-check: %1 folder(s) plugged into the model in %2 s, %3 not pluggable")
                  .arg(list->size())
                  .arg(jsonfield::number(reply.result, "seconds", reply.seconds), 0, 'f', 1)
                  .arg(refused);
}

} // namespace ak
