#include "services/agentsettings.h"

#include "llm/llmprotocol.h"
#include "workerlauncher.h"

#include "runconfig.h"

#include "agents/commandagent.h"
#include "deviceinfo.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSettings>
#include <QStandardPaths>
#include <QUrl>

#include <algorithm>

namespace ak {

namespace {

const QString Group = QStringLiteral("agent");

QString keySourceName(AgentSettings::KeySource s)
{
    return s == AgentSettings::KeySource::Stored ? QStringLiteral("stored") : QStringLiteral("environment");
}

AgentSettings::Problem devicesProblem(const QStringList &devices)
{
    QStringList seen;
    for (const QString &d : devices) {
        if (!DeviceInfo::isDeviceName(d))
            return { QStringLiteral("devices"),
                QStringLiteral("Devices: \"%1\" is not cpu, cuda or cuda:N (e.g. \"cuda\", \"cuda:0,cuda:1\" "
                               "or \"cpu\"; "
                               "empty for the run's default)")
                    .arg(d) };
        if (seen.contains(d))
            return { QStringLiteral("devices"),
                QStringLiteral("Devices: %1 is listed twice (one loop per device)").arg(d) };
        seen << d;
    }
    return {};
}

// A base URL the LLM client can use: http(s) with a host, and no secret in it.
AgentSettings::Problem baseUrlProblem(const QString &base)
{
    const QUrl url(base, QUrl::StrictMode);
    const QString scheme = url.scheme().toLower();
    if (!url.isValid() || (scheme != QLatin1String("http") && scheme != QLatin1String("https"))
        || url.host().isEmpty())
        return { QStringLiteral("baseUrl"),
            QStringLiteral(
                "Base URL: \"%1\" is not an http:// or https:// URL (e.g. http://localhost:8000/v1 "
                "for vLLM; empty for the protocol's public endpoint)")
                .arg(base) };
    if (const QString secret = LlmProtocol::secretInUrl(url); !secret.isEmpty())
        return { QStringLiteral("baseUrl"),
            QStringLiteral("Base URL: it carries a secret (%1); put the key in the Key field or an "
                           "environment variable, never in the URL")
                .arg(secret) };
    return {};
}

// Where the key comes from: a variable's name (never echoed: it may be the key itself) or a stored key.
AgentSettings::Problem keyProblem(const AgentSettings &s)
{
    if (s.keySource == AgentSettings::KeySource::Environment) {
        static const QRegularExpression name(QStringLiteral("^[A-Za-z_][A-Za-z0-9_]*$"));
        const QString env = s.agent.apiKeyEnv.trimmed();
        if (env.isEmpty())
            return { QStringLiteral("apiKeyEnv"),
                QStringLiteral(
                    "API key variable: name the environment variable that holds the key (e.g. %1), "
                    "or store a key here")
                    .arg(AgentSettings::defaultKeyEnv(s.agent.llmProtocol)) };
        if (!name.match(env).hasMatch())
            return { QStringLiteral("apiKeyEnv"),
                // Not echoed: what was typed may be the key itself.
                QStringLiteral("API key variable: not an environment variable name (letters, digits and _, "
                               "not starting with a digit); enter the variable's name, not the key") };
    } else if (s.apiKey.trimmed().isEmpty()) {
        return { QStringLiteral("apiKey"),
            QStringLiteral("API key: enter the key to store, or take it from an environment variable") };
    }
    return {};
}

// The LLM agent's fields in the dialog's order: protocol, base URL, model, key.
AgentSettings::Problem llmProblem(const AgentSettings &s)
{
    const AgentConfig &agent = s.agent;
    if (agent.llmProtocol != QLatin1String("openai") && agent.llmProtocol != QLatin1String("anthropic"))
        return { QStringLiteral("protocol"),
            QStringLiteral("Protocol: expected openai or anthropic, not \"%1\"").arg(agent.llmProtocol) };
    const QString base = agent.baseUrl.trimmed();
    if (!base.isEmpty())
        if (const AgentSettings::Problem p = baseUrlProblem(base); !p.isEmpty())
            return p;
    if (agent.model.trimmed().isEmpty())
        return { QStringLiteral("model"),
            QStringLiteral(
                "Model: the LLM agent needs a model name (e.g. gpt-4.1, claude-sonnet-4-5, or the name "
                "your local server serves)") };
    return keyProblem(s);
}

AgentSettings::Problem commandProblem(const QString &commandTemplate)
{
    if (commandTemplate.trimmed().isEmpty())
        return { QStringLiteral("command"),
            QStringLiteral("Command: enter the program to run, e.g. mytool --prompt-file {prompt} "
                           "--workdir {dir}") };
    QString why;
    if (CommandAgent::expand(commandTemplate, {}, &why).isEmpty())
        return { QStringLiteral("command"), QStringLiteral("Command: %1").arg(why) };
    return {};
}

// The replayed run must be a run directory (it has run.json).
AgentSettings::Problem replayProblem(const QString &dir)
{
    if (dir.isEmpty())
        return { QStringLiteral("replayRun"),
            QStringLiteral("Replay run: choose the run directory whose proposals are replayed") };
    if (!QFileInfo(dir).isDir())
        return { QStringLiteral("replayRun"),
            QStringLiteral("Replay run: %1 is not a directory").arg(QDir::toNativeSeparators(dir)) };
    if (!QFileInfo(QDir(dir).filePath(QStringLiteral("run.json"))).isFile())
        return { QStringLiteral("replayRun"),
            QStringLiteral("Replay run: %1 has no run.json (not a run directory)")
                .arg(QDir::toNativeSeparators(dir)) };
    return {};
}

// The launcher must parse; the interpreter is checked here only when workers run locally (behind a
// launcher it is a name on another machine).
AgentSettings::Problem workersProblem(const QString &launcher, const QString &python)
{
    QString launcherError;
    const WorkerLauncher workers = WorkerLauncher::parse(launcher, &launcherError);
    if (!launcherError.isEmpty())
        return { QStringLiteral("launcher"), QStringLiteral("Launcher: ") + launcherError };
    const QString py = python.trimmed();
    if (!py.isEmpty() && (workers.isLocal() || launcher.trimmed() == QLatin1String("local"))) {
        const bool isPath = py.contains(QLatin1Char('/')) || py.contains(QDir::separator());
        const QFileInfo fi(py);
        const bool ok
            = isPath ? fi.isFile() && fi.isExecutable() : !QStandardPaths::findExecutable(py).isEmpty();
        if (!ok)
            return { QStringLiteral("python"),
                QStringLiteral("Python: %1 is not an executable file%2 (empty: found automatically)")
                    .arg(QDir::toNativeSeparators(py), isPath ? QString() : QStringLiteral(" on PATH")) };
    }
    return {};
}

} // namespace

QString AgentSettings::defaultKeyEnv(const QString &protocol)
{
    return protocol == QLatin1String("anthropic") ? QStringLiteral("ANTHROPIC_API_KEY")
                                                  : QStringLiteral("OPENAI_API_KEY");
}

bool AgentSettings::parseDevices(const QString &text, QStringList *out, QString *error)
{
    static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
    const QStringList devices = text.trimmed().split(separators, Qt::SkipEmptyParts);
    if (const Problem p = devicesProblem(devices); !p.isEmpty()) {
        if (error)
            *error = p.message;
        return false;
    }
    *out = devices;
    return true;
}

AgentSettings::Problem AgentSettings::check() const
{
    // The agent's own fields first (the order the dialog shows them), then devices and workers.
    Problem agentProblem;
    switch (agent.kind) {
    case AgentConfig::Kind::Tune:
        break;
    case AgentConfig::Kind::Llm:
        agentProblem = llmProblem(*this);
        break;
    case AgentConfig::Kind::Command:
        agentProblem = commandProblem(agent.commandTemplate);
        break;
    case AgentConfig::Kind::Replay:
        agentProblem = replayProblem(agent.replayRun.trimmed());
        break;
    }
    if (!agentProblem.isEmpty())
        return agentProblem;
    if (const Problem p = devicesProblem(devices); !p.isEmpty())
        return p;
    return workersProblem(launcher, python);
}

AgentSettings AgentSettings::fromRun(const RunConfig &run)
{
    AgentSettings s;
    QString unreadable; // a malformed agent section: the tune defaults stand, as for none
    AgentConfig::fromRun(run, &s.agent, &unreadable);
    if (s.agent.apiKeyEnv.trimmed().isEmpty())
        s.agent.apiKeyEnv = defaultKeyEnv(s.agent.llmProtocol);
    return s;
}

bool AgentSettings::isSaved(QSettings &settings)
{
    return settings.contains(Group + QStringLiteral("/kind"));
}

bool AgentSettings::load(QSettings &settings, AgentSettings *out)
{
    if (!isSaved(settings))
        return false;
    AgentSettings s;
    settings.beginGroup(Group);
    if (!AgentConfig::parseKind(settings.value(QStringLiteral("kind")).toString(), &s.agent.kind))
        s.agent.kind = AgentConfig::Kind::Tune;
    const QString protocol = settings.value(QStringLiteral("protocol")).toString();
    s.agent.llmProtocol = protocol == QLatin1String("anthropic") ? protocol : QStringLiteral("openai");
    s.agent.baseUrl = settings.value(QStringLiteral("baseUrl")).toString();
    s.agent.model = settings.value(QStringLiteral("model")).toString();
    s.agent.apiKeyEnv
        = settings.value(QStringLiteral("apiKeyEnv"), defaultKeyEnv(s.agent.llmProtocol)).toString();
    s.agent.commandTemplate = settings.value(QStringLiteral("command")).toString();
    s.agent.replayRun = settings.value(QStringLiteral("replayRun")).toString();
    s.agent.seed = settings.value(QStringLiteral("seed"), 0).toInt();
    s.agent.contextTokens = std::max(0, settings.value(QStringLiteral("contextTokens"), 0).toInt());
    s.maxTokens = std::max(0, settings.value(QStringLiteral("maxTokens"), 0).toInt());
    s.keySource = settings.value(QStringLiteral("keySource")).toString() == keySourceName(KeySource::Stored)
        ? KeySource::Stored
        : KeySource::Environment;
    if (s.keySource == KeySource::Stored)
        s.apiKey = settings.value(QStringLiteral("apiKey")).toString();
    QString ignored;
    parseDevices(settings.value(QStringLiteral("devices")).toString(), &s.devices, &ignored);
    s.python = settings.value(QStringLiteral("python")).toString();
    s.launcher = settings.value(QStringLiteral("launcher")).toString();
    settings.endGroup();
    *out = s;
    return true;
}

void AgentSettings::save(QSettings &settings) const
{
    settings.beginGroup(Group);
    settings.setValue(QStringLiteral("kind"), AgentConfig::kindName(agent.kind));
    settings.setValue(QStringLiteral("protocol"), agent.llmProtocol);
    settings.setValue(QStringLiteral("baseUrl"), agent.baseUrl.trimmed());
    settings.setValue(QStringLiteral("model"), agent.model.trimmed());
    settings.setValue(QStringLiteral("apiKeyEnv"), agent.apiKeyEnv.trimmed());
    settings.setValue(QStringLiteral("keySource"), keySourceName(keySource));
    settings.setValue(QStringLiteral("command"), agent.commandTemplate);
    settings.setValue(QStringLiteral("replayRun"), agent.replayRun.trimmed());
    settings.setValue(QStringLiteral("seed"), agent.seed);
    settings.setValue(QStringLiteral("contextTokens"), agent.contextTokens);
    settings.setValue(QStringLiteral("maxTokens"), maxTokens);
    settings.setValue(QStringLiteral("devices"), devices.join(QLatin1Char(',')));
    settings.setValue(QStringLiteral("python"), python.trimmed());
    settings.setValue(QStringLiteral("launcher"), launcher.trimmed());
    const bool storeKey = keySource == KeySource::Stored && !apiKey.trimmed().isEmpty();
    if (storeKey)
        settings.setValue(QStringLiteral("apiKey"), apiKey.trimmed());
    else
        settings.remove(QStringLiteral("apiKey")); // switching to the environment deletes a stored key
    settings.endGroup();
    settings.sync();
    // The file holds a secret now: readable by its owner only (QSettings rewrites it through
    // QSaveFile, which keeps the permissions of the file it replaces).
    // (On Windows the native store is the registry: no file.)
    if (const QString file = settings.fileName(); storeKey && QFileInfo(file).isFile())
        QFile::setPermissions(file, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
}

void AgentSettings::forget(QSettings &settings)
{
    settings.remove(Group);
    settings.sync();
}

LoopOptions AgentSettings::loopOptions(const QString &runDir) const
{
    LoopOptions o;
    o.runDir = runDir;
    o.devices = devices;
    o.python = python.trimmed();
    if (!launcher.trimmed().isEmpty()) {
        o.setLauncher = true;
        o.launcher = launcher.trimmed() == QLatin1String("local") ? QString() : launcher.trimmed();
    }
    // run.json's agent underneath: its request limits (max tokens, timeouts, attempts) still apply.
    RunConfig run;
    QString unreadable; // no run.json or a malformed agent section: the tune defaults underneath
    if (RunConfig::read(runDir, &run))
        AgentConfig::fromRun(run, &o.agent, &unreadable);
    o.agent.kind = agent.kind;
    o.agent.llmProtocol = agent.llmProtocol;
    o.agent.baseUrl = agent.baseUrl.trimmed();
    o.agent.model = agent.model.trimmed();
    o.agent.apiKeyEnv = agent.apiKeyEnv.trimmed();
    o.agent.commandTemplate = agent.commandTemplate;
    o.agent.replayRun = agent.replayRun.trimmed();
    o.agent.seed = agent.seed;
    if (agent.contextTokens > 0) // 0: ask the server (or run.json's agent.context_tokens stands)
        o.agent.contextTokens = agent.contextTokens;
    if (maxTokens > 0) // 0: run.json's agent.max_tokens stands
        o.agent.maxTokens = maxTokens;
    o.overrideAgent = true;
    // The key travels in memory only, to createAgent (LoopOptions::agentInputs is never written).
    if (agent.kind == AgentConfig::Kind::Llm && keySource == KeySource::Stored)
        o.agentInputs.apiKey = apiKey.trimmed();
    return o;
}

LoopOptions AgentSettings::loopOptions(const QString &runDir, QSettings &settings)
{
    AgentSettings s;
    if (load(settings, &s))
        return s.loopOptions(runDir);
    LoopOptions o;
    o.runDir = runDir;
    return o;
}

QString AgentSettings::summary() const
{
    QString what;
    switch (agent.kind) {
    case AgentConfig::Kind::Tune:
        what = QStringLiteral("tune agent (seed %1)").arg(agent.seed);
        break;
    case AgentConfig::Kind::Llm: {
        const QString key = keySource == KeySource::Stored
            ? QStringLiteral("key stored in your settings")
            : QStringLiteral("key from $%1").arg(agent.apiKeyEnv.trimmed());
        what = QStringLiteral("llm agent (%1, %2 at %3, %4)")
                   .arg(agent.llmProtocol, agent.model.trimmed(),
                       agent.baseUrl.trimmed().isEmpty() ? QStringLiteral("the public endpoint")
                                                         : agent.baseUrl.trimmed(),
                       key);
        break;
    }
    case AgentConfig::Kind::Command:
        what = QStringLiteral("command agent (%1)").arg(agent.commandTemplate.trimmed());
        break;
    case AgentConfig::Kind::Replay:
        what = QStringLiteral("replay agent (%1)").arg(QDir::toNativeSeparators(agent.replayRun.trimmed()));
        break;
    }
    return QStringLiteral("%1 on %2, %3")
               .arg(what,
                   devices.isEmpty() ? QStringLiteral("the run's default device")
                                     : devices.join(QStringLiteral(", ")),
                   python.trimmed().isEmpty() ? QStringLiteral("Python found automatically")
                                              : QStringLiteral("Python %1").arg(python.trimmed()))
        + (launcher.trimmed().isEmpty() || launcher.trimmed() == QLatin1String("local")
                ? QString()
                : QStringLiteral(", workers through '%1'").arg(launcher.trimmed()));
}

} // namespace ak
