// Loop ▸ Agent…: the dialog's checks name the field, the choice round-trips through the settings
// store (a stored key only there, readable by its owner only), the LoopOptions that Loop ▸ Start is
// built with carry it, and a real loop started through the window with a stored key talks to a
// loopback LLM server without writing the key into any file of the run.
//
// Settings: tst_ui runs with QStandardPaths' test mode and its own organisation (main.cpp), so the
// default QSettings is a test file, never the user's; every test starts and ends with nothing saved.
#include "dialogs/agentsettingsdialog.h"
#include "loop/localloop.h"
#include "loopbackllmserver.h"
#include "mainwindow.h"
#include "runconfig.h"
#include "runloader.h"
#include "runstore.h"
#include "secretscan.h"
#include "services/agentsettings.h"
#include "services/directorycontrol.h"
#include "testfixtures.h"
#include "testregistry.h"
#include "widgets/logview.h"
#include "widgets/steeringactions.h"

#include <QAction>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QRadioButton>
#include <QRandomGenerator>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>

#include <functional>

using namespace ak;
using ak::test::LoopbackLlmServer;
using ak::test::ScriptedReply;

namespace {

QString python()
{
    return qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
}

// run.json's text as the window holds it: parsed once into the snapshot's RunConfig.
RunConfig configOf(const QByteArray &runJson)
{
    RunConfig config;
    if (!RunConfig::parse(runJson, &config))
        qFatal("not a run.json object: %s", runJson.constData());
    return config;
}

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

QByteArray randomKey()
{
    return "sk-ui-" + QByteArray::number(QRandomGenerator::global()->generate64(), 16) + "-secret";
}

bool writeFile(const QString &path, const QByteArray &data)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly) && f.write(data) == data.size();
}

// The starter CPU softmax with ROW_CHUNK = n (1: the slow baseline an LLM edit improves on).
QByteArray chunk(int n)
{
    QByteArray s
        = readFile(QStringLiteral(AUTOKERNEL_SOURCE_DIR "/agent/python/harness/starters/cpu/softmax.py"));
    s.replace(QByteArray("ROW_CHUNK = 64\n"), QByteArray("ROW_CHUNK = " + QByteArray::number(n) + '\n'));
    return s;
}

bool ownerOnly(const QString &file)
{
    const QFileDevice::Permissions p = QFileInfo(file).permissions();
    return p.testFlag(QFileDevice::ReadOwner)
        && !(p
            & (QFileDevice::ReadGroup | QFileDevice::WriteGroup | QFileDevice::ReadOther
                | QFileDevice::WriteOther));
}

AgentSettings llmSettings(const QString &key)
{
    AgentSettings s;
    s.agent.kind = AgentConfig::Kind::Llm;
    s.agent.llmProtocol = QStringLiteral("openai");
    s.agent.baseUrl = QStringLiteral("http://localhost:8000/v1");
    s.agent.model = QStringLiteral("Qwen/Qwen2.5-Coder-32B-Instruct");
    s.agent.apiKeyEnv = QStringLiteral("OPENAI_API_KEY");
    s.keySource = AgentSettings::KeySource::Stored;
    s.apiKey = key;
    s.devices = { QStringLiteral("cuda:0"), QStringLiteral("cuda:1") };
    s.python = python();
    return s;
}

void forgetSaved()
{
    QSettings store;
    AgentSettings::forget(store);
}

} // namespace

class AgentSettingsTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase()
    {
        // The default settings file is the test location, not the user's configuration.
        const QString file = QSettings().fileName();
        QVERIFY2(file.contains(QLatin1String("qttest")) && file.contains(QLatin1String("AutoKernelTest")),
            qPrintable(file));
    }
    void init() { forgetSaved(); }
    void cleanup() { forgetSaved(); }

    // OK with a bad field: the dialog stays open, says what is wrong naming the field, focuses it,
    // and nothing is saved.
    void validationNamesTheField()
    {
        QTemporaryDir notARun;
        QVERIFY(notARun.isValid());
        struct Case
        {
            const char *name;
            std::function<void(AgentSettingsDialog &)> fill;
            QString field;
            QString label;
            QString mentions;
        };
        auto llm = [](AgentSettingsDialog &d) {
            d.setKind(AgentConfig::Kind::Llm);
            d.modelEdit()->setText(QStringLiteral("gpt-4.1"));
        };
        const QVector<Case> cases = {
            { "llm without model", [](AgentSettingsDialog &d) { d.setKind(AgentConfig::Kind::Llm); },
                QStringLiteral("model"), QStringLiteral("Model: "), QStringLiteral("model name") },
            { "base URL ftp",
                [&](AgentSettingsDialog &d) {
                    llm(d);
                    d.baseUrlEdit()->setText(QStringLiteral("ftp://example.com/v1"));
                },
                QStringLiteral("baseUrl"), QStringLiteral("Base URL: "), QStringLiteral("http://") },
            { "base URL without scheme",
                [&](AgentSettingsDialog &d) {
                    llm(d);
                    d.baseUrlEdit()->setText(QStringLiteral("localhost:8000/v1"));
                },
                QStringLiteral("baseUrl"), QStringLiteral("Base URL: "),
                QStringLiteral("localhost:8000/v1") },
            { "secret in the base URL",
                [&](AgentSettingsDialog &d) {
                    llm(d);
                    d.baseUrlEdit()->setText(QStringLiteral("http://localhost:8000/v1?api_key=sk-hidden-42"));
                },
                QStringLiteral("baseUrl"), QStringLiteral("Base URL: "),
                QStringLiteral("query parameter 'api_key'") },
            { "key variable empty",
                [&](AgentSettingsDialog &d) {
                    llm(d);
                    d.keyEnvEdit()->clear();
                },
                QStringLiteral("apiKeyEnv"), QStringLiteral("API key variable: "),
                QStringLiteral("OPENAI_API_KEY") },
            { "key pasted as variable",
                [&](AgentSettingsDialog &d) {
                    llm(d);
                    d.keyEnvEdit()->setText(QStringLiteral("sk-abc-123"));
                },
                QStringLiteral("apiKeyEnv"), QStringLiteral("API key variable: "),
                QStringLiteral("not the key") },
            { "stored key empty",
                [&](AgentSettingsDialog &d) {
                    llm(d);
                    d.keyStored()->setChecked(true);
                },
                QStringLiteral("apiKey"), QStringLiteral("API key: "), QStringLiteral("enter the key") },
            { "command empty", [](AgentSettingsDialog &d) { d.setKind(AgentConfig::Kind::Command); },
                QStringLiteral("command"), QStringLiteral("Command: "), QStringLiteral("{prompt}") },
            { "command quote",
                [](AgentSettingsDialog &d) {
                    d.setKind(AgentConfig::Kind::Command);
                    d.commandEdit()->setText(QStringLiteral("mytool '{prompt}"));
                },
                QStringLiteral("command"), QStringLiteral("Command: "), QStringLiteral("unclosed") },
            { "replay empty", [](AgentSettingsDialog &d) { d.setKind(AgentConfig::Kind::Replay); },
                QStringLiteral("replayRun"), QStringLiteral("Replay run: "),
                QStringLiteral("run directory") },
            { "replay without run.json",
                [&](AgentSettingsDialog &d) {
                    d.setKind(AgentConfig::Kind::Replay);
                    d.replayEdit()->setText(notARun.path());
                },
                QStringLiteral("replayRun"), QStringLiteral("Replay run: "),
                QStringLiteral("has no run.json") },
            { "replay missing",
                [&](AgentSettingsDialog &d) {
                    d.setKind(AgentConfig::Kind::Replay);
                    d.replayEdit()->setText(notARun.filePath(QStringLiteral("nope")));
                },
                QStringLiteral("replayRun"), QStringLiteral("Replay run: "),
                QStringLiteral("not a directory") },
            { "device gpu", [](AgentSettingsDialog &d) { d.devicesEdit()->setText(QStringLiteral("gpu")); },
                QStringLiteral("devices"), QStringLiteral("Devices: "), QStringLiteral("\"gpu\"") },
            { "device twice",
                [](AgentSettingsDialog &d) { d.devicesEdit()->setText(QStringLiteral("cuda:0, cuda:0")); },
                QStringLiteral("devices"), QStringLiteral("Devices: "), QStringLiteral("twice") },
            { "python missing",
                [](AgentSettingsDialog &d) {
                    d.pythonEdit()->setText(QStringLiteral("/nonexistent/python3"));
                },
                QStringLiteral("python"), QStringLiteral("Python: "),
                QStringLiteral("/nonexistent/python3") },
        };
        for (const Case &c : cases) {
            AgentSettingsDialog d;
            d.prefill(nullptr);
            c.fill(d);
            d.buttons()->button(QDialogButtonBox::Ok)->click();
            QVERIFY2(d.result() != QDialog::Accepted, c.name);
            QVERIFY2(d.errorText().startsWith(c.label),
                qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(c.name), d.errorText())));
            QVERIFY2(d.errorText().contains(c.mentions),
                qPrintable(QStringLiteral("%1: %2").arg(QLatin1String(c.name), d.errorText())));
            QVERIFY2(d.focusWidget() && d.focusWidget()->objectName() == c.field,
                qPrintable(
                    QStringLiteral("%1: focus on %2")
                        .arg(QLatin1String(c.name),
                            d.focusWidget() ? d.focusWidget()->objectName() : QStringLiteral("nothing"))));
            QSettings store;
            QVERIFY2(!AgentSettings::isSaved(store), c.name);
            // The same check without the dialog.
            if (c.field != QLatin1String("devices"))
                QCOMPARE(d.settings().check().field, c.field);
        }
        // The defaults are valid: the tune agent, default device, automatic Python.
        QCOMPARE(AgentSettings().check().field, QString());
    }

    void validSettingsPass()
    {
        QTemporaryDir tmp;
        QVERIFY(writeFile(tmp.filePath(QStringLiteral("run.json")), "{}"));
        AgentSettings s = llmSettings(QStringLiteral("sk-x"));
        QVERIFY2(s.check().isEmpty(), qPrintable(s.check().message));
        s.agent.baseUrl.clear(); // the public endpoint
        QVERIFY(s.check().isEmpty());
        s.keySource = AgentSettings::KeySource::Environment;
        s.apiKey.clear();
        QVERIFY(s.check().isEmpty());
        s.agent.llmProtocol = QStringLiteral("anthropic");
        s.agent.baseUrl = QStringLiteral("https://api.anthropic.com");
        QVERIFY(s.check().isEmpty());
        s.agent.kind = AgentConfig::Kind::Command;
        s.agent.commandTemplate = QStringLiteral("mytool --prompt-file {prompt} --workdir '{dir}'");
        QVERIFY(s.check().isEmpty());
        s.agent.kind = AgentConfig::Kind::Replay;
        s.agent.replayRun = tmp.path();
        QVERIFY(s.check().isEmpty());
        s.python = QStringLiteral("sh"); // a name found on PATH is fine
        QVERIFY2(s.check().isEmpty(), qPrintable(s.check().message));
        QStringList devices;
        QString why;
        QVERIFY(AgentSettings::parseDevices(QStringLiteral(" cuda:0,cuda:1 "), &devices, &why));
        QCOMPARE(devices, (QStringList { QStringLiteral("cuda:0"), QStringLiteral("cuda:1") }));
        QVERIFY(AgentSettings::parseDevices(QStringLiteral("cpu"), &devices, &why));
        QCOMPARE(devices, QStringList { QStringLiteral("cpu") });
        QVERIFY(AgentSettings::parseDevices(QString(), &devices, &why));
        QVERIFY(devices.isEmpty());
    }

    // save/load through a settings file of its own; the key is written only while "stored" is chosen.
    void roundTripThroughTheSettingsStore()
    {
        QTemporaryDir tmp;
        const QString path = tmp.filePath(QStringLiteral("settings.conf"));
        const QString key = QString::fromLatin1(randomKey());
        {
            QSettings store(path, QSettings::IniFormat);
            QVERIFY(!AgentSettings::isSaved(store));
            AgentSettings nothing;
            QVERIFY(!AgentSettings::load(store, &nothing));
            llmSettings(key).save(store);
        }
        QVERIFY(readFile(path).contains(key.toLatin1())); // where a stored key lives
        QVERIFY2(ownerOnly(path), qPrintable(QString::number(QFileInfo(path).permissions(), 16)));
        {
            QSettings store(path, QSettings::IniFormat);
            AgentSettings back;
            QVERIFY(AgentSettings::load(store, &back));
            const AgentSettings want = llmSettings(key);
            QCOMPARE(back.agent.kind, AgentConfig::Kind::Llm);
            QCOMPARE(back.agent.llmProtocol, want.agent.llmProtocol);
            QCOMPARE(back.agent.baseUrl, want.agent.baseUrl);
            QCOMPARE(back.agent.model, want.agent.model);
            QCOMPARE(back.agent.apiKeyEnv, want.agent.apiKeyEnv);
            QCOMPARE(back.keySource, AgentSettings::KeySource::Stored);
            QCOMPARE(back.apiKey, key);
            QCOMPARE(back.devices, want.devices);
            QCOMPARE(back.python, want.python);
            // Another write to the same file (the window's geometry) keeps it private.
            store.setValue(QStringLiteral("mainWindow/geometry"), QByteArray("x"));
            store.sync();
        }
        QVERIFY(ownerOnly(path));
        {
            // Every kind's fields survive.
            QSettings store(path, QSettings::IniFormat);
            AgentSettings s;
            s.agent.kind = AgentConfig::Kind::Command;
            s.agent.commandTemplate = QStringLiteral("mytool --prompt-file {prompt} --workdir {dir}");
            s.agent.replayRun = QStringLiteral("/runs/old");
            s.agent.seed = 42;
            s.agent.llmProtocol = QStringLiteral("anthropic");
            s.agent.apiKeyEnv = QStringLiteral("MY_KEY");
            s.save(store);
            AgentSettings back;
            QVERIFY(AgentSettings::load(store, &back));
            QCOMPARE(back.agent.kind, AgentConfig::Kind::Command);
            QCOMPARE(back.agent.commandTemplate, s.agent.commandTemplate);
            QCOMPARE(back.agent.replayRun, s.agent.replayRun);
            QCOMPARE(back.agent.seed, 42);
            QCOMPARE(back.agent.llmProtocol, QStringLiteral("anthropic"));
            QCOMPARE(back.agent.apiKeyEnv, QStringLiteral("MY_KEY"));
            QCOMPARE(back.keySource, AgentSettings::KeySource::Environment);
            QVERIFY(back.apiKey.isEmpty());
            QVERIFY(back.devices.isEmpty());
            QVERIFY(back.python.isEmpty());
        }
        // Choosing the environment deleted the stored key.
        QVERIFY(!readFile(path).contains(key.toLatin1()));
        {
            QSettings store(path, QSettings::IniFormat);
            llmSettings(key).save(store);
            QVERIFY(readFile(path).contains(key.toLatin1()));
            AgentSettings::forget(store);
            QVERIFY(!AgentSettings::isSaved(store));
            QVERIFY(store.contains(QStringLiteral("mainWindow/geometry"))); // only the agent's group goes
        }
        QVERIFY(!readFile(path).contains(key.toLatin1()));
    }

    // What main.cpp's factory builds.
    void loopOptionsFromTheSettings()
    {
        QTemporaryDir tmp;
        const QString runDir = tmp.path();
        QVERIFY(writeFile(QDir(runDir).filePath(QStringLiteral("run.json")),
            R"({"model": "m", "agent": {"kind": "tune", "model": "other", "max_tokens": 1234, "request_timeout_sec": 77}})"));
        QSettings store(tmp.filePath(QStringLiteral("settings.conf")), QSettings::IniFormat);

        // Nothing saved: what Start did before, run.json's agent on the default device.
        LoopOptions plain = AgentSettings::loopOptions(runDir, store);
        QCOMPARE(plain.runDir, runDir);
        QVERIFY(!plain.overrideAgent);
        QVERIFY(plain.devices.isEmpty());
        QVERIFY(plain.python.isEmpty());
        QVERIFY(plain.agentInputs.apiKey.isEmpty());

        const QString key = QString::fromLatin1(randomKey());
        llmSettings(key).save(store);
        const LoopOptions o = AgentSettings::loopOptions(runDir, store);
        QCOMPARE(o.runDir, runDir);
        QVERIFY(o.overrideAgent);
        QCOMPARE(o.agent.kind, AgentConfig::Kind::Llm);
        QCOMPARE(o.agent.llmProtocol, QStringLiteral("openai"));
        QCOMPARE(o.agent.model, QStringLiteral("Qwen/Qwen2.5-Coder-32B-Instruct"));
        QCOMPARE(o.agent.baseUrl, QStringLiteral("http://localhost:8000/v1"));
        QCOMPARE(o.devices, (QStringList { QStringLiteral("cuda:0"), QStringLiteral("cuda:1") }));
        QCOMPARE(o.python, python());
        QCOMPARE(o.agentInputs.apiKey, key);
        // run.json's request limits stay underneath.
        QCOMPARE(o.agent.maxTokens, 1234);
        QCOMPARE(o.agent.requestTimeoutSec, 77);
        // What a run could record holds no key.
        QVERIFY(!o.agent.toJson().contains(key.toLatin1()));
        QString error;
        QVERIFY2(createAgent(o.agent, o.agentInputs, &error), qPrintable(error));
        QVERIFY(!o.agent.toJson().contains(key.toLatin1()));
        QVERIFY(!QString::fromStdString(
            RunConfig::stripSecrets(nlohmann::json::parse(o.agent.toJson().toStdString())).dump())
                     .contains(key));

        // The context chosen in the dialog reaches the agent's config (0 leaves run.json's, or asks).
        QCOMPARE(o.agent.contextTokens, 0);
        AgentSettings sized = llmSettings(key);
        sized.agent.contextTokens = 32768;
        sized.save(store);
        QCOMPARE(AgentSettings::loopOptions(runDir, store).agent.contextTokens, 32768);
        AgentSettingsDialog dialog;
        AgentSettings loaded;
        QVERIFY(AgentSettings::load(store, &loaded));
        dialog.setSettings(loaded);
        QCOMPARE(dialog.contextBox()->value(), 32768);

        // So does the reply's limit (run's --max-tokens, run.json's agent.max_tokens).
        QCOMPARE(dialog.maxTokensBox()->value(), 0); // run.json's 1234 stands (above)
        sized.maxTokens = 4096;
        sized.save(store);
        QVERIFY(QString::fromUtf8(AgentSettings::loopOptions(runDir, store).agent.toJson())
                    .contains(QStringLiteral("\"max_tokens\": 4096")));

        // Key from the environment: only the variable's name travels.
        AgentSettings env = llmSettings(QString());
        env.keySource = AgentSettings::KeySource::Environment;
        env.agent.apiKeyEnv = QStringLiteral("MY_LLM_KEY");
        env.save(store);
        const LoopOptions e = AgentSettings::loopOptions(runDir, store);
        QVERIFY(e.agentInputs.apiKey.isEmpty());
        QCOMPARE(e.agent.apiKeyEnv, QStringLiteral("MY_LLM_KEY"));

        // Another kind never gets a key, even one left in the store.
        AgentSettings command = llmSettings(key);
        command.agent.kind = AgentConfig::Kind::Command;
        command.agent.commandTemplate = QStringLiteral("mytool {prompt} {dir}");
        command.devices = { QStringLiteral("cpu") };
        command.python.clear();
        command.save(store);
        const LoopOptions c = AgentSettings::loopOptions(runDir, store);
        QCOMPARE(c.agent.kind, AgentConfig::Kind::Command);
        QCOMPARE(c.agent.commandTemplate, QStringLiteral("mytool {prompt} {dir}"));
        QCOMPARE(c.devices, QStringList { QStringLiteral("cpu") });
        QVERIFY(c.python.isEmpty());
        QVERIFY(c.agentInputs.apiKey.isEmpty());

        QVERIFY(!c.setLauncher); // no launcher chosen: run.json's "worker" section decides

        // A launcher typed in the dialog reaches the loop (and run.json, where the loop writes it);
        // "local" is an explicit return to local workers; a bad quote names the field.
        AgentSettingsDialog launchDialog;
        AgentSettings remote = command;
        remote.python = QStringLiteral("/opt/venv/bin/python"); // a path on the far side: not checked here
        remote.launcher = QStringLiteral("ssh -p 2222 gpu1");
        launchDialog.setSettings(remote);
        QCOMPARE(launchDialog.launcherEdit()->text(), remote.launcher);
        QVERIFY(launchDialog.settings().check().isEmpty());
        launchDialog.settings().save(store);
        const LoopOptions r = AgentSettings::loopOptions(runDir, store);
        QVERIFY(r.setLauncher);
        QCOMPARE(r.launcher, QStringLiteral("ssh -p 2222 gpu1"));
        QCOMPARE(r.python, QStringLiteral("/opt/venv/bin/python"));
        remote.launcher = QStringLiteral("local");
        remote.python.clear();
        remote.save(store);
        const LoopOptions l = AgentSettings::loopOptions(runDir, store);
        QVERIFY(l.setLauncher);
        QVERIFY(l.launcher.isEmpty());
        remote.launcher = QStringLiteral("ssh 'gpu1");
        QCOMPARE(remote.check().field, QStringLiteral("launcher"));
        QVERIFY2(remote.check().message.startsWith(QStringLiteral("Launcher: ")),
            qPrintable(remote.check().message));

        // Forgotten: back to the run's agent.
        AgentSettings::forget(store);
        QVERIFY(!AgentSettings::loopOptions(runDir, store).overrideAgent);
    }

    void prefillFromTheRunThenFromTheSettings()
    {
        {
            AgentSettingsDialog d;
            const RunConfig run = configOf(
                R"({"agent": {"kind": "command", "command": "mytool --prompt-file {prompt} --workdir {dir}"}})");
            d.prefill(&run);
            QCOMPARE(d.kindBox()->currentData().toString(), QStringLiteral("command"));
            QCOMPARE(
                d.commandEdit()->text(), QStringLiteral("mytool --prompt-file {prompt} --workdir {dir}"));
            QVERIFY2(d.sourceText().contains(QStringLiteral("run.json")), qPrintable(d.sourceText()));
            QVERIFY(!d.buttons()->button(QDialogButtonBox::Reset)->isEnabled()); // nothing to forget
        }
        {
            AgentSettingsDialog d;
            const RunConfig run = configOf(
                R"({"agent": {"kind": "llm", "protocol": "anthropic", "model": "claude-sonnet-4-5"}})");
            d.prefill(&run);
            QCOMPARE(d.kindBox()->currentData().toString(), QStringLiteral("llm"));
            QCOMPARE(d.protocolBox()->currentData().toString(), QStringLiteral("anthropic"));
            QCOMPARE(d.modelEdit()->text(), QStringLiteral("claude-sonnet-4-5"));
            QCOMPARE(d.keyEnvEdit()->text(), QStringLiteral("ANTHROPIC_API_KEY"));
            QVERIFY(d.keyFromEnvironment()->isChecked());
            // The default variable follows the protocol; a variable of one's own stays.
            d.protocolBox()->setCurrentIndex(d.protocolBox()->findData(QStringLiteral("openai")));
            QCOMPARE(d.keyEnvEdit()->text(), QStringLiteral("OPENAI_API_KEY"));
            d.keyEnvEdit()->setText(QStringLiteral("MY_KEY"));
            d.protocolBox()->setCurrentIndex(d.protocolBox()->findData(QStringLiteral("anthropic")));
            QCOMPARE(d.keyEnvEdit()->text(), QStringLiteral("MY_KEY"));
            // The key note names the settings file and recommends the variable.
            QVERIFY(d.keyNote()->text().contains(QDir::toNativeSeparators(QSettings().fileName())));
            QVERIFY(d.keyNote()->text().contains(QStringLiteral("environment variable")));
        }
        {
            // OK saves what is shown.
            const QString key = QString::fromLatin1(randomKey());
            AgentSettingsDialog d;
            d.prefill(nullptr);
            QCOMPARE(d.kindBox()->currentData().toString(), QStringLiteral("tune"));
            d.setKind(AgentConfig::Kind::Llm);
            d.baseUrlEdit()->setText(QStringLiteral("http://127.0.0.1:11434/v1"));
            d.modelEdit()->setText(QStringLiteral("qwen2.5-coder"));
            d.keyStored()->setChecked(true);
            QVERIFY(!d.keyEnvEdit()->isEnabled());
            QVERIFY(d.keyEdit()->isEnabled());
            QCOMPARE(d.keyEdit()->echoMode(), QLineEdit::Password);
            d.keyEdit()->setText(QStringLiteral("  %1\n").arg(key)); // pasted with whitespace
            d.devicesEdit()->setText(QStringLiteral("cuda:1"));
            d.maxTokensBox()->setValue(4096);
            d.accept();
            QCOMPARE(d.result(), int(QDialog::Accepted));
            QVERIFY(!d.forgotten());
            QSettings store;
            AgentSettings saved;
            QVERIFY(AgentSettings::load(store, &saved));
            QCOMPARE(saved.agent.kind, AgentConfig::Kind::Llm);
            QCOMPARE(saved.agent.baseUrl, QStringLiteral("http://127.0.0.1:11434/v1"));
            QCOMPARE(saved.agent.model, QStringLiteral("qwen2.5-coder"));
            QCOMPARE(saved.apiKey, key);
            QCOMPARE(saved.devices, QStringList { QStringLiteral("cuda:1") });
            QCOMPARE(saved.maxTokens, 4096);
            QVERIFY(ownerOnly(store.fileName()));
        }
        {
            // Saved settings win over the run's agent.
            AgentSettingsDialog d;
            const RunConfig run = configOf(R"({"agent": {"kind": "command", "command": "x"}})");
            d.prefill(&run);
            QCOMPARE(d.kindBox()->currentData().toString(), QStringLiteral("llm"));
            QCOMPARE(d.modelEdit()->text(), QStringLiteral("qwen2.5-coder"));
            QVERIFY(d.keyStored()->isChecked());
            QVERIFY(d.sourceText().contains(QStringLiteral("saved")));
            QPushButton *reset = d.buttons()->button(QDialogButtonBox::Reset);
            QVERIFY(reset->isEnabled());
            QCOMPARE(reset->text(), QStringLiteral("Use the Run's Agent"));
            reset->click();
            QCOMPARE(d.result(), int(QDialog::Accepted));
            QVERIFY(d.forgotten());
            QSettings store;
            QVERIFY(!AgentSettings::isSaved(store));
            QVERIFY(!store.contains(QStringLiteral("agent/apiKey")));
        }
    }

    // Loop ▸ Agent… in the window: the choice is logged without the key.
    void testConnectionUsesTheFieldsAndNamesTheCause()
    {
        LoopbackLlmServer server;
        QVERIFY(server.start());
        const QString key = QString::fromLatin1(randomKey());
        AgentSettingsDialog d;
        d.prefill(nullptr);
        d.setKind(AgentConfig::Kind::Llm);
        d.baseUrlEdit()->setText(server.baseUrl());
        d.modelEdit()->setText(QStringLiteral("qwen-coder"));
        d.keyStored()->setChecked(true);
        d.keyEdit()->setText(key);
        auto *button = d.findChild<QPushButton *>(QStringLiteral("testConnection"));
        auto *result = d.findChild<QLabel *>(QStringLiteral("testResult"));
        QVERIFY(button && result);

        // The server answers: the verdict and what it said about itself, off the GUI thread (the
        // loopback server answers from this thread's event loop while the probe waits).
        server.setDiscoveryReply("/v1/models",
            ScriptedReply::rawReply(200,
                R"({"object":"list","data":[{"id":"qwen-coder","object":"model","max_model_len":131072}]})"));
        server.enqueue(ScriptedReply::reply(QStringLiteral("OK")));
        button->click();
        QVERIFY(!button->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(button->isEnabled(), 15000);
        QVERIFY2(
            result->text().startsWith(QStringLiteral("ok: qwen-coder answered")), qPrintable(result->text()));
        QVERIFY2(result->text().contains(QStringLiteral("131072")), qPrintable(result->text()));
        const auto requests = server.requests();
        QVERIFY(requests.size() >= 1);
        QCOMPARE(requests.first().headers.value("authorization"),
            "Bearer " + key.toUtf8()); // the stored key, in memory

        // A refused key: named, and the key itself never shown.
        server.setDiscoveryReply(
            "/v1/models", ScriptedReply::rawReply(401, R"({"error":{"message":"bad key"}})"));
        server.enqueue(ScriptedReply::error(401, QStringLiteral("Incorrect API key provided: ") + key));
        button->click();
        QTRY_VERIFY_WITH_TIMEOUT(button->isEnabled(), 15000);
        QVERIFY2(result->text().contains(QStringLiteral("refused the API key")), qPrintable(result->text()));
        QVERIFY(!result->text().contains(key));

        // Fields that cannot make a request: said at once, nothing sent.
        const int sent = int(server.requests().size());
        d.modelEdit()->clear();
        button->click();
        QVERIFY(button->isEnabled());
        QVERIFY2(result->text().contains(QStringLiteral("model")), qPrintable(result->text()));
        QCOMPARE(int(server.requests().size()), sent);
    }

    void windowAction()
    {
        MainWindow w;
        QVERIFY(test::named<QAction>(&w, "AgentAction"));
        QVERIFY(
            test::named<QAction>(&w, "AgentAction")->isEnabled()); // no run needed: the choice is the user's
        QVERIFY(
            test::named<QAction>(&w, "AgentAction")->toolTip().contains(QStringLiteral("run's own agent")));
        test::named<QAction>(&w, "AgentAction")->trigger();
        QPointer<AgentSettingsDialog> d = test::named<AgentSettingsDialog>(&w, "AgentSettingsDialog");
        QVERIFY(d);
        const QString key = QString::fromLatin1(randomKey());
        d->setKind(AgentConfig::Kind::Llm);
        d->modelEdit()->setText(QStringLiteral("gpt-4.1"));
        d->keyStored()->setChecked(true);
        d->keyEdit()->setText(key);
        d->devicesEdit()->setText(QStringLiteral("cpu"));
        d->buttons()->button(QDialogButtonBox::Ok)->click();
        QTRY_VERIFY(!d); // closed and deleted
        const QString log = test::named<LogView>(&w, "LogView")->toPlainText();
        QVERIFY2(log.contains(QStringLiteral("Loop ▸ Start will use llm agent (openai, gpt-4.1 at the public "
                                             "endpoint, key stored in your settings) on cpu")),
            qPrintable(log));
        QVERIFY(!log.contains(key));
        QVERIFY(test::named<QAction>(&w, "AgentAction")->toolTip().contains(QStringLiteral("gpt-4.1")));
        QVERIFY(!test::named<QAction>(&w, "AgentAction")->toolTip().contains(key));
        // A second open shows the saved choice; "Use the Run's Agent" goes back.
        test::named<QAction>(&w, "AgentAction")->trigger();
        d = test::named<AgentSettingsDialog>(&w, "AgentSettingsDialog");
        QVERIFY(d);
        QCOMPARE(d->modelEdit()->text(), QStringLiteral("gpt-4.1"));
        d->buttons()->button(QDialogButtonBox::Reset)->click();
        QTRY_VERIFY(!d);
        QVERIFY(test::named<LogView>(&w, "LogView")
                    ->toPlainText()
                    .contains(QStringLiteral("Loop ▸ Start will use each run's own agent")));
        QSettings store;
        QVERIFY(!AgentSettings::isSaved(store));
    }

    // Loop ▸ Start through the window, with the factory main.cpp sets (plus a one-experiment limit):
    // the LLM agent with a key stored in the settings talks to a loopback server; the key reaches the
    // server and no file of the run.
    void storedKeyReachesTheServerAndNoFileOfTheRun()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString dir = tmp.filePath(QStringLiteral("run"));
        const QString kernel = QStringLiteral("01-softmax");
        {
            const nlohmann::json config
                = { { "model", "ui-e2e" }, { "python", python().toStdString() }, { "activity", "cpu" },
                      { "move_on", { { "max_consecutive_reverts", 0 }, { "speedup_over_baseline", 0 } } } };
            QString error;
            std::unique_ptr<RunStore> store = RunStore::create(dir, config, &error);
            QVERIFY2(store, qPrintable(error));
            KernelRecord k;
            k.rank = 1;
            k.folder = QStringLiteral("kernels/") + kernel;
            k.name = QStringLiteral("aten::_softmax");
            k.opType = QStringLiteral("softmax");
            k.dtype = QStringLiteral("fp32");
            k.share = 1.0;
            QVERIFY2(store->addKernel(k, chunk(1), &error).id != 0, qPrintable(error));
        }
        LoopbackLlmServer server;
        QVERIFY(server.start());
        server.enqueue(
            ScriptedReply::reply(QStringLiteral("DESCRIPTION: ROW_CHUNK 1 -> 256\n\n```python\n%1```\n")
                                     .arg(QString::fromUtf8(chunk(256)))));

        const QByteArray key = randomKey();
        {
            AgentSettings s;
            s.agent.kind = AgentConfig::Kind::Llm;
            s.agent.llmProtocol = QStringLiteral("openai");
            s.agent.baseUrl = server.baseUrl();
            s.agent.model = QStringLiteral("ui-model");
            s.agent.apiKeyEnv = QStringLiteral("AK_UI_TEST_UNSET_KEY");
            s.keySource = AgentSettings::KeySource::Stored;
            s.apiKey = QString::fromLatin1(key);
            s.devices = { QStringLiteral("cpu") };
            s.python = python();
            QVERIFY2(s.check().isEmpty(), qPrintable(s.check().message));
            QSettings store;
            s.save(store);
        }

        MainWindow w;
        QPointer<LocalLoop> made;
        QString endReason;
        w.setLoopFactory([&made, &endReason](const QString &runDir, QObject *parent) -> LoopControl * {
            QSettings settings;
            LoopOptions options = AgentSettings::loopOptions(runDir, settings); // what main.cpp does
            options.maxExperiments = 1;
            options.quickBench = true;
            options.benchTimeLimitSec = 120;
            made = new LocalLoop(options, parent);
            QObject::connect(
                made, &LocalLoop::finished, [&endReason](const QString &why) { endReason = why; });
            return made;
        });
        QVERIFY(test::openAndWait(w, dir));
        QTRY_VERIFY2(test::named<SteeringActions>(&w, "SteeringActions")->start()->isEnabled(),
            qPrintable(test::named<SteeringActions>(&w, "SteeringActions")->start()->toolTip()));
        test::named<SteeringActions>(&w, "SteeringActions")->start()->trigger();
        QVERIFY(made);
        QVERIFY2(made->description().contains(QStringLiteral("llm agent")), qPrintable(made->description()));
        QTRY_VERIFY_WITH_TIMEOUT(!endReason.isEmpty(), 180000);
        QTRY_VERIFY(qobject_cast<DirectoryControl *>(
            test::named<SteeringActions>(&w, "SteeringActions")->loopControl()));
        const QString log = test::named<LogView>(&w, "LogView")->toPlainText();
        QCOMPARE(endReason, QStringLiteral("1 experiments done"));

        // The stored key reached the server.
        const QVector<ak::test::RecordedRequest> requests = server.requests();
        QCOMPARE(requests.size(), 1);
        QCOMPARE(requests[0].headers.value("authorization"), "Bearer " + key);

        QString error;
        const RunSnapshotPtr run = RunLoader::load(dir, &error);
        QVERIFY2(run, qPrintable(error));
        QCOMPARE(run->experiments.size(), 2);
        QCOMPARE(run->experiments[1].agent, QStringLiteral("llm:ui-model"));
        QCOMPARE(run->experiments[1].description, QStringLiteral("ROW_CHUNK 1 -> 256"));

        // ... and no file of the run, the log, or the settings beyond the agent's own entry.
        int files = 0;
        const QStringList leaks = test::filesHolding(dir, key, &files);
        QVERIFY2(leaks.isEmpty(), qPrintable(leaks.join(QLatin1Char('\n'))));
        QVERIFY(files > 10);
        QVERIFY(!readFile(QDir(dir).filePath(QStringLiteral("run.json"))).contains(key));
        QVERIFY2(!log.contains(QString::fromLatin1(key)), qPrintable(log));
        QVERIFY(readFile(QSettings().fileName()).contains(key)); // where it lives
    }
};

AK_TEST_CLASS(AgentSettingsTest)
#include "tst_agentsettings.moc"
