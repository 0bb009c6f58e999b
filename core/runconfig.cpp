#include "runconfig.h"

#include "jsonfield.h"

#include <nlohmann/json.hpp>

#include <QDir>
#include <QFile>

using nlohmann::json;

namespace ak {

namespace {

bool isSecretKey(const std::string &key)
{
    const QString k = QString::fromStdString(key).toLower().replace(QLatin1Char('-'), QLatin1Char('_'));
    // "max_tokens" is a setting, "token" and "auth_token" are credentials.
    return k.contains(QLatin1String("api_key")) || k.contains(QLatin1String("apikey"))
        || k.contains(QLatin1String("secret")) || k.contains(QLatin1String("password"))
        || k == QLatin1String("token") || k.endsWith(QLatin1String("_token"))
        || k == QLatin1String("authorization");
}

template<class Json>
void strip(Json &j, const QString &prefix, QStringList *removed)
{
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end();) {
            const QString name = prefix.isEmpty()
                ? QString::fromStdString(it.key())
                : prefix + QLatin1Char('.') + QString::fromStdString(it.key());
            if (isSecretKey(it.key())) {
                if (removed)
                    *removed << name;
                it = j.erase(it);
            } else {
                strip(*it, name, removed);
                ++it;
            }
        }
    } else if (j.is_array()) {
        for (auto &v : j)
            strip(v, prefix, removed);
    }
}

} // namespace

QString RunConfig::workerSummary() const
{
    if (!workerSlurm.isEmpty())
        return workerSlurmJob > 0
            ? QStringLiteral("Slurm job %1 (salloc %2)").arg(workerSlurmJob).arg(workerSlurm)
            : QStringLiteral("Slurm (salloc %1)").arg(workerSlurm);
    return workerLauncher.isEmpty() ? QStringLiteral("local")
                                    : QStringLiteral("through '%1'").arg(workerLauncher);
}

bool RunConfig::parse(const QByteArray &runJson, RunConfig *out, QString *error)
{
    *out = RunConfig();
    const json o = json::parse(runJson.constData(), runJson.constData() + runJson.size(), nullptr, false);
    if (o.is_discarded() || !o.is_object()) {
        if (error)
            *error = QStringLiteral("run.json: not a JSON object");
        return false;
    }
    out->model = jsonfield::text(o, "model");
    out->modelPath = jsonfield::text(o, "model_path");
    out->modelSha256 = jsonfield::text(o, "model_sha256");
    out->python = jsonfield::text(o, "python");
    out->activity = jsonfield::text(o, "activity");
    out->dtype = jsonfield::text(o, "dtype");
    if (const auto d = o.find("device"); d != o.end())
        out->device = DeviceInfo::fromJson(*d);
    if (const auto st = o.find("settings"); st != o.end() && st->is_object()) {
        out->reviewMode = jsonfield::boolean(*st, "review_mode", false);
        out->allowReducedPrecision = jsonfield::boolean(*st, "allow_reduced_precision", false);
    }
    if (const auto m = o.find("move_on"); m != o.end()) {
        QString why;
        if (!MoveOnRules::fromJson(QByteArray::fromStdString(m->dump()), &out->moveOn, &why)) {
            out->moveOn = MoveOnRules();
            out->moveOnWarning = QStringLiteral("run.json: move_on: %1").arg(why);
        }
    }
    if (const auto a = o.find("agent"); a != o.end())
        out->agentJson = QByteArray::fromStdString(a->dump());
    if (const auto w = o.find("worker"); w != o.end() && w->is_object()) {
        out->workerLauncher = jsonfield::text(*w, "launcher");
        out->workerPython = jsonfield::text(*w, "python");
        out->workerSlurm = jsonfield::text(*w, "slurm");
        out->workerSlurmJob = jsonfield::integer(*w, "slurm_job", 0);
    }
    return true;
}

bool RunConfig::read(const QString &runDir, RunConfig *out, QString *error)
{
    QFile f(QDir(runDir).filePath(QStringLiteral("run.json")));
    if (runDir.isEmpty() || !f.open(QIODevice::ReadOnly)) {
        *out = RunConfig();
        if (error)
            *error = QStringLiteral("cannot read %1: %2").arg(f.fileName(), f.errorString());
        return false;
    }
    return parse(f.readAll(), out, error);
}

json RunConfig::stripSecrets(const json &config, QStringList *removed)
{
    json copy = config;
    strip(copy, QString(), removed);
    return copy;
}

QByteArray RunConfig::withMoveOn(const QByteArray &runJson, const MoveOnRules &rules, QString *error)
{
    return withSection(runJson, "move_on", json::parse(rules.toJson().toStdString()), error);
}

QByteArray RunConfig::withSection(
    const QByteArray &runJson, const char *key, const nlohmann::json &section, QString *error)
{
    using ordered = nlohmann::ordered_json;
    ordered config
        = ordered::parse(runJson.constData(), runJson.constData() + runJson.size(), nullptr, false);
    if (config.is_discarded() || !config.is_object()) {
        if (error)
            *error = QStringLiteral("run.json: not a JSON object");
        return QByteArray();
    }
    strip(config, QString(), nullptr);
    const ordered value = ordered::parse(section.dump());
    if (config.contains(key)) {
        config[key] = value;
    } else {
        // RunStore::create writes keys sorted: in a sorted file the new key goes where sorting puts
        // it; in any other order, at the end.
        bool sorted = true;
        for (auto it = config.begin(), prev = config.end(); it != config.end(); prev = it, ++it)
            sorted = sorted && (prev == config.end() || prev.key() < it.key());
        ordered with = ordered::object();
        bool placed = false;
        for (auto it = config.begin(); it != config.end(); ++it) {
            if (sorted && !placed && it.key() > std::string(key)) {
                with[key] = value;
                placed = true;
            }
            with[it.key()] = it.value();
        }
        if (!placed)
            with[key] = value;
        config = std::move(with);
    }
    return QByteArray::fromStdString(config.dump(2, ' ', false, ordered::error_handler_t::replace)) + '\n';
}

} // namespace ak
