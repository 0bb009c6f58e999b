#include "dialogs/agentsettingsdialog.h"

#include "dialogs/browserow.h"
#include "dialogs/llmconnectiontest.h"
#include "dialogs/tunememoryrow.h"
#include "runconfig.h"
#include "widgets/errortint.h"
#include "widgets/wrappedlabel.h"

#include <QButtonGroup>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QShowEvent>
#include <QSpinBox>
#include <QUrl>
#include <QVBoxLayout>

#include <algorithm>

namespace ak {

namespace {

QLineEdit *lineEdit(const QString &name, const QString &placeholder, QWidget *parent)
{
    auto *edit = new QLineEdit(parent);
    edit->setObjectName(name);
    edit->setPlaceholderText(placeholder);
    edit->setClearButtonEnabled(true);
    return edit;
}

QString defaultBaseUrl(const QString &protocol)
{
    return protocol == QLatin1String("anthropic") ? QStringLiteral("https://api.anthropic.com")
                                                  : QStringLiteral("https://api.openai.com/v1");
}

} // namespace

// The widgets are made in the member initialisers, then section by section below, in this order: Qt's
// default tab order is the order widgets are made, and the dialog relies on it (no setTabOrder).
AgentSettingsDialog::AgentSettingsDialog(QWidget *parent)
    : QDialog(parent)
    , m_source(wrappedLabel(QString(), this))
    , m_kind(new QComboBox(this))
    , m_seed(new QSpinBox(this))
    , m_tuneMemory(new TuneMemoryRow(this))
    , m_context(new QSpinBox(this))
    , m_maxTokens(new QSpinBox(this))
    , m_protocol(new QComboBox(this))
    , m_baseUrl(lineEdit(QStringLiteral("baseUrl"), QString(), this))
    , m_model(lineEdit(QStringLiteral("model"),
          tr("e.g. gpt-4.1, claude-sonnet-4-5, Qwen/Qwen2.5-Coder-32B-Instruct"), this))
    , m_keyFromEnv(new QRadioButton(tr("From the environment variable"), this))
    , m_keyStored(new QRadioButton(tr("Stored in my settings"), this))
    , m_keyEnv(lineEdit(QStringLiteral("apiKeyEnv"), QStringLiteral("OPENAI_API_KEY"), this))
    , m_key(lineEdit(QStringLiteral("apiKey"), tr("the key itself"), this))
    , m_keyEnvStatus(wrappedLabel(QString(), this))
    , m_keyNote(wrappedLabel(QString(), this))
    , m_command(
          lineEdit(QStringLiteral("command"), tr("mytool --prompt-file {prompt} --workdir {dir}"), this))
    , m_replay(lineEdit(QStringLiteral("replayRun"), tr("a run directory (holds run.json)"), this))
    , m_devices(lineEdit(
          QStringLiteral("devices"), tr("default: cuda if the run was profiled on a GPU, else cpu"), this))
    , m_python(lineEdit(QStringLiteral("python"), QStringLiteral("automatic"), this))
    , m_launcher(lineEdit(QStringLiteral("launcher"), QStringLiteral("the run's (local)"), this))
    , m_error(wrappedLabel(QString(), this))
    , m_buttons(new QDialogButtonBox(
          QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::Reset, this))
{
    setWindowTitle(tr("Agent"));
    setObjectName(QStringLiteral("AgentSettingsDialog"));

    QLabel *intro = createIntro();
    createAgentChoice();
    // One page per kind, in the combo's order (kindChanged shows the current one by its index).
    m_pages.append(createTunePage());
    m_pages.append(createLlmPage());
    m_pages.append(createCommandPage());
    m_pages.append(createReplayPage());
    for (QWidget *page : m_pages)
        page->layout()->setContentsMargins(0, 0, 0, 0); // the dialog's layout has the margins
    QGroupBox *where = createWhereBox();
    createErrorAndButtons();
    layOut(intro, where);

    // Only now, with every field made: the defaults fill them and run the handlers once.
    setSettings(AgentSettings());
    resize(640, sizeHint().height());
}

QLabel *AgentSettingsDialog::createIntro()
{
    auto *intro = wrappedLabel(
        QStringLiteral("What <b>Loop ▸ Start</b> runs, for any run opened in this window. The choice is "
                       "saved in your settings, not in the run, and takes effect at the next Start. "
                       "Without one, Start uses the run's own agent (run.json \"agent\"; the tune agent "
                       "when it has none) on the run's default device."),
        this);
    intro->setTextFormat(Qt::RichText);
    m_source->setObjectName(QStringLiteral("source"));
    return intro;
}

void AgentSettingsDialog::createAgentChoice()
{
    m_kind->setObjectName(QStringLiteral("kind"));
    m_kind->addItem(tr("tune — tries the kernel's tunable constants (offline, no LLM)"),
        AgentConfig::kindName(AgentConfig::Kind::Tune));
    m_kind->addItem(tr("llm — a language model over HTTP (OpenAI-compatible or Anthropic)"),
        AgentConfig::kindName(AgentConfig::Kind::Llm));
    m_kind->addItem(
        tr("command — your own program edits the kernel"), AgentConfig::kindName(AgentConfig::Kind::Command));
    m_kind->addItem(tr("replay — the proposals of a recorded run, in order"),
        AgentConfig::kindName(AgentConfig::Kind::Replay));
    // After the items: the first addItem changes the index, before there are pages to show.
    connect(m_kind, &QComboBox::currentIndexChanged, this, &AgentSettingsDialog::kindChanged);
}

QWidget *AgentSettingsDialog::createTunePage()
{
    auto *page = new QWidget(this);
    m_seed->setObjectName(QStringLiteral("seed"));
    m_seed->setRange(0, 1000000000);
    m_seed->setToolTip(
        tr("Seeds the random restarts of the search; the same seed proposes the same sequence."));
    auto *form = new QFormLayout(page);
    form->addRow(wrappedLabel(
        QStringLiteral("Coordinate descent over the kernel's UPPER_CASE constants (block sizes, warps, "
                       "stages), with random restarts; never repeats a configuration."),
        page));
    form->addRow(tr("Seed"), m_seed);
    // Read here, once per opening of the dialog (MainWindow makes a new one each time).
    form->addRow(m_tuneMemory);
    // Forget… can show or hide its error line, which changes the height the dialog needs.
    connect(m_tuneMemory, &TuneMemoryRow::resized, this, &AgentSettingsDialog::fitHeight);
    return page;
}

QWidget *AgentSettingsDialog::createLlmPage()
{
    auto *page = new QWidget(this);
    m_protocol->setObjectName(QStringLiteral("protocol"));
    m_protocol->addItem(tr("openai — Chat Completions (OpenAI, vLLM, Ollama, llama.cpp, LM Studio)"),
        QStringLiteral("openai"));
    m_protocol->addItem(tr("anthropic — Messages API"), QStringLiteral("anthropic"));
    m_baseUrl->setToolTip(
        QStringLiteral("The server's base URL; empty for the protocol's public endpoint. Local servers: "
                       "vLLM http://localhost:8000/v1, Ollama http://localhost:11434/v1, llama.cpp "
                       "http://localhost:8080/v1, LM Studio http://localhost:1234/v1."));
    m_model->setToolTip(tr("The model name the server expects."));
    QGroupBox *keyBox = createKeyBox(page);
    auto *form = new QFormLayout(page);
    form->addRow(tr("Protocol"), m_protocol);
    form->addRow(tr("Base URL"), m_baseUrl);
    auto *servers
        = wrappedLabel(QStringLiteral("Local servers: http://localhost:8000/v1 (vLLM), :11434/v1 (Ollama), "
                                      ":8080/v1 (llama.cpp), :1234/v1 (LM Studio)"),
            page);
    form->addRow(servers);
    form->addRow(tr("Model"), m_model);
    addLimitRows(form);
    form->addRow(keyBox);
    // Tests what the fields say now, saved or not; a stored key only when that is the key's source.
    form->addRow(new LlmConnectionTest(
        [this] {
            const AgentSettings s = settings();
            return std::make_pair(
                s.agent, s.keySource == AgentSettings::KeySource::Stored ? s.apiKey.trimmed() : QString());
        },
        page));
    // After the items, as for the kind: setSettings runs protocolChanged once the key fields are set.
    connect(m_protocol, &QComboBox::currentIndexChanged, this, &AgentSettingsDialog::protocolChanged);
    return page;
}

QGroupBox *AgentSettingsDialog::createKeyBox(QWidget *page)
{
    m_keyEnv->setToolTip(
        QStringLiteral("The name of the variable, not the key. It is read from the environment AutoKernel "
                       "Studio was started in."));
    m_key->setEchoMode(QLineEdit::Password);
    m_key->setToolTip(QStringLiteral(
        "Kept in your settings file only; never written to a run, its git history or the log."));
    m_keyFromEnv->setObjectName(QStringLiteral("keyFromEnvironment"));
    m_keyStored->setObjectName(QStringLiteral("keyStored"));
    // One choice by an explicit group, not by the radios happening to share a parent.
    auto *keySource = new QButtonGroup(this);
    keySource->addButton(m_keyFromEnv);
    keySource->addButton(m_keyStored);
    m_keyEnvStatus->setObjectName(QStringLiteral("keyEnvStatus"));
    m_keyNote->setObjectName(QStringLiteral("keyNote"));
    m_keyNote->setText(
        QStringLiteral("Recommended: keep the key in an environment variable, set before AutoKernel Studio "
                       "starts. A key stored here is kept in plain text in your settings file, %1 (readable "
                       "by you only). Either way it is sent only to the server and never written to the run "
                       "directory, its git history or the log. Local servers usually need no key.")
            .arg(QDir::toNativeSeparators(QSettings().fileName())));
    auto *keyGrid = new QFormLayout;
    keyGrid->addRow(m_keyFromEnv, m_keyEnv);
    keyGrid->addRow(m_keyStored, m_key);
    auto *keyBox = new QGroupBox(tr("API key"), page);
    auto *keyLayout = new QVBoxLayout(keyBox);
    keyLayout->addLayout(keyGrid);
    keyLayout->addWidget(m_keyEnvStatus);
    keyLayout->addWidget(m_keyNote);
    connect(m_keyFromEnv, &QRadioButton::toggled, this, &AgentSettingsDialog::keySourceChanged);
    connect(m_keyEnv, &QLineEdit::textChanged, this, &AgentSettingsDialog::updateKeyEnvStatus);
    // The status says whether a missing key matters, which depends on the server being a public one.
    connect(m_baseUrl, &QLineEdit::textChanged, this, &AgentSettingsDialog::updateKeyEnvStatus);
    return keyBox;
}

void AgentSettingsDialog::addLimitRows(QFormLayout *form)
{
    m_context->setObjectName(QStringLiteral("contextTokens"));
    m_context->setRange(0, 10000000);
    m_context->setSingleStep(1024);
    m_context->setSpecialValueText(tr("ask the server"));
    m_context->setSuffix(tr(" tokens"));
    m_context->setToolTip(tr("The model's context. By default the run asks the server (vLLM, llama.cpp, "
                             "Ollama) or a table of hosted models, and sends the compact playbook when the "
                             "whole one does not fit. Set it when the server does not say or says wrong."));
    form->addRow(tr("Context"), m_context);
    m_maxTokens->setObjectName(QStringLiteral("maxTokens"));
    m_maxTokens->setRange(0, 10000000);
    m_maxTokens->setSingleStep(1024);
    m_maxTokens->setSpecialValueText(tr("the run's (16384 by default)"));
    m_maxTokens->setSuffix(tr(" tokens"));
    m_maxTokens->setToolTip(tr("The longest reply asked for. Each request asks for at most this, the "
                               "model's output limit and the room its context leaves."));
    form->addRow(tr("Max tokens"), m_maxTokens);
}

QWidget *AgentSettingsDialog::createCommandPage()
{
    auto *page = new QWidget(this);
    auto *form = new QFormLayout(page);
    form->addRow(tr("Command"), m_command);
    auto *help = wrappedLabel(
        QStringLiteral("Runs once per experiment in a scratch copy of the kernel's folder. "
                       "<b>{prompt}</b> is replaced by a file with the instructions and the kernel's "
                       "context, <b>{dir}</b> by that scratch folder (also the working directory), "
                       "<b>{kernel}</b> by its kernel.py, which the program edits in place. A "
                       "DESCRIPTION file it leaves in {dir} (else its first line of output) describes "
                       "the change. The line is split into words like a shell would, but no shell "
                       "runs it: write sh -c '…' for pipes or variables."),
        page);
    help->setTextFormat(Qt::RichText);
    form->addRow(help);
    return page;
}

QWidget *AgentSettingsDialog::createReplayPage()
{
    auto *page = new QWidget(this);
    QPushButton *browse = nullptr;
    auto *form = new QFormLayout(page);
    form->addRow(tr("Recorded run"), withBrowse(m_replay, &browse, page));
    form->addRow(wrappedLabel(
        QStringLiteral("Serves the proposals recorded in that run again, kernel by kernel and in "
                       "their order (to re-measure them on this machine)."),
        page));
    connect(browse, &QPushButton::clicked, this, [this] {
        const QString dir
            = QFileDialog::getExistingDirectory(this, tr("Recorded Run to Replay"), m_replay->text());
        if (!dir.isEmpty())
            m_replay->setText(QDir::toNativeSeparators(dir));
    });
    return page;
}

QGroupBox *AgentSettingsDialog::createWhereBox()
{
    QPushButton *browsePython = nullptr;
    m_devices->setToolTip(
        QStringLiteral("One loop per device, each on a different kernel: \"cuda\", \"cuda:0,cuda:1\" or "
                       "\"cpu\". Empty: cuda if the run was profiled on a GPU, else cpu."));
    m_python->setToolTip(
        QStringLiteral("An interpreter with torch (and triton for GPU kernels). Empty: $AUTOKERNEL_PYTHON, "
                       "the run's own interpreter, then an active venv or conda, then python3 on PATH."));
    m_launcher->setToolTip(tr(
        "Start each device's worker through this command, e.g. \"ssh gpu1\" or \"srun --gpus=1 "
        "--ntasks=1\": nothing needs to be shared with that machine, only a Python with torch there "
        "(Python names it). Empty: the run's own setting (run.json \"worker\"); \"local\": this machine."));
    auto *whereBox = new QGroupBox(tr("Where it runs"), this);
    auto *whereForm = new QFormLayout(whereBox);
    whereForm->addRow(tr("Devices"), m_devices);
    whereForm->addRow(tr("Python"), withBrowse(m_python, &browsePython, whereBox));
    whereForm->addRow(tr("Launcher"), m_launcher);
    connect(browsePython, &QPushButton::clicked, this, [this] {
        const QString file = QFileDialog::getOpenFileName(this, tr("Python Interpreter"), m_python->text());
        if (!file.isEmpty())
            m_python->setText(QDir::toNativeSeparators(file));
    });
    return whereBox;
}

void AgentSettingsDialog::createErrorAndButtons()
{
    // Hidden until OK refuses the fields (showProblem); tinted like the other dialogs' errors.
    m_error->setObjectName(QStringLiteral("error"));
    ErrorTint::apply(m_error);
    m_error->hide();

    QPushButton *reset = m_buttons->button(QDialogButtonBox::Reset);
    reset->setText(tr("Use the Run's Agent"));
    reset->setToolTip(
        QStringLiteral("Forget the choice saved here (a stored key too): Loop ▸ Start uses each run's "
                       "run.json agent (tune when it has none) on the run's default device."));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &AgentSettingsDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &AgentSettingsDialog::reject);
    connect(reset, &QPushButton::clicked, this, &AgentSettingsDialog::useRunAgent);
}

void AgentSettingsDialog::layOut(QLabel *intro, QGroupBox *where)
{
    auto *form = new QFormLayout;
    form->addRow(tr("Agent"), m_kind);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(m_source);
    layout->addLayout(form);
    for (QWidget *page : m_pages)
        layout->addWidget(page);
    layout->addWidget(where);
    layout->addWidget(m_error);
    layout->addStretch(1);
    layout->addWidget(m_buttons);
}

void AgentSettingsDialog::showEvent(QShowEvent *event)
{
    QDialog::showEvent(event);
    fitHeight();
}

void AgentSettingsDialog::fitHeight()
{
    if (!isVisible())
        return; // showEvent fits it
    // A label shown or hidden inside a group box reaches the dialog's layout through posted layout
    // requests (group box, then dialog); until they are handled its cached height is stale.
    for (int level = 0; level < 3; ++level)
        QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    layout()->activate();
    const int w = std::max(width(), minimumSizeHint().width());
    const int h = hasHeightForWidth() ? heightForWidth(w) : -1;
    resize(w, h > 0 ? h : sizeHint().height());
}

void AgentSettingsDialog::prefill(const RunConfig *run)
{
    QSettings store;
    AgentSettings s;
    const bool saved = AgentSettings::load(store, &s);
    if (!saved)
        s = AgentSettings::fromRun(run ? *run : RunConfig());
    setSettings(s);
    m_source->setText(saved ? tr("Shown: your saved choice; Loop ▸ Start uses it for every run.")
            : !run          ? QStringLiteral("Nothing saved yet: Loop ▸ Start uses each run's own agent. "
                                                      "OK saves what is shown.")
                            : QStringLiteral("Nothing saved yet: shown is this run's own agent (run.json), "
                                                      "which Loop ▸ Start uses now. OK saves what is shown."));
    m_buttons->button(QDialogButtonBox::Reset)->setEnabled(saved);
}

void AgentSettingsDialog::setKind(AgentConfig::Kind kind)
{
    m_kind->setCurrentIndex(m_kind->findData(AgentConfig::kindName(kind)));
}

void AgentSettingsDialog::setSettings(const AgentSettings &s)
{
    setKind(s.agent.kind);
    m_seed->setValue(s.agent.seed);
    m_context->setValue(s.agent.contextTokens);
    m_maxTokens->setValue(s.maxTokens);
    const int protocol = m_protocol->findData(s.agent.llmProtocol);
    m_protocol->setCurrentIndex(protocol < 0 ? 0 : protocol);
    m_protocolShown = m_protocol->currentData().toString();
    m_baseUrl->setText(s.agent.baseUrl);
    m_model->setText(s.agent.model);
    m_keyEnv->setText(s.agent.apiKeyEnv.trimmed().isEmpty() ? AgentSettings::defaultKeyEnv(m_protocolShown)
                                                            : s.agent.apiKeyEnv);
    m_key->setText(s.keySource == AgentSettings::KeySource::Stored ? s.apiKey : QString());
    (s.keySource == AgentSettings::KeySource::Stored ? m_keyStored : m_keyFromEnv)->setChecked(true);
    m_command->setText(s.agent.commandTemplate);
    m_replay->setText(QDir::toNativeSeparators(s.agent.replayRun));
    m_devices->setText(s.devices.join(QLatin1Char(',')));
    m_python->setText(s.python);
    m_launcher->setText(s.launcher);
    kindChanged();
    protocolChanged();
    keySourceChanged();
    m_error->hide();
    m_error->clear();
}

AgentSettings::Problem AgentSettingsDialog::collect(AgentSettings *out) const
{
    AgentSettings s;
    AgentConfig::parseKind(m_kind->currentData().toString(), &s.agent.kind);
    s.agent.seed = m_seed->value();
    s.agent.contextTokens = m_context->value();
    s.maxTokens = m_maxTokens->value();
    s.agent.llmProtocol = m_protocol->currentData().toString();
    s.agent.baseUrl = m_baseUrl->text().trimmed();
    s.agent.model = m_model->text().trimmed();
    s.agent.apiKeyEnv = m_keyEnv->text().trimmed();
    s.keySource
        = m_keyStored->isChecked() ? AgentSettings::KeySource::Stored : AgentSettings::KeySource::Environment;
    if (s.keySource == AgentSettings::KeySource::Stored)
        s.apiKey = m_key->text().trimmed();
    s.agent.commandTemplate = m_command->text().trimmed();
    s.agent.replayRun = QDir::fromNativeSeparators(m_replay->text().trimmed());
    s.python = m_python->text().trimmed();
    s.launcher = m_launcher->text().trimmed();
    QString why;
    const bool devicesOk = AgentSettings::parseDevices(m_devices->text(), &s.devices, &why);
    *out = s;
    if (!devicesOk)
        return { QStringLiteral("devices"), why };
    return s.check();
}

AgentSettings AgentSettingsDialog::settings() const
{
    AgentSettings s;
    collect(&s);
    return s;
}

QString AgentSettingsDialog::sourceText() const
{
    return m_source->text();
}

QString AgentSettingsDialog::errorText() const
{
    return m_error->text();
}

void AgentSettingsDialog::showProblem(const AgentSettings::Problem &problem)
{
    m_error->setText(problem.message);
    m_error->show();
    fitHeight();
    if (auto *widget = findChild<QWidget *>(problem.field)) {
        widget->setFocus();
        if (auto *edit = qobject_cast<QLineEdit *>(widget))
            edit->selectAll();
    }
}

void AgentSettingsDialog::accept()
{
    AgentSettings s;
    if (const AgentSettings::Problem problem = collect(&s); !problem.isEmpty())
        return showProblem(problem);
    QSettings store;
    s.save(store);
    m_forgotten = false;
    QDialog::accept();
}

void AgentSettingsDialog::useRunAgent()
{
    QSettings store;
    AgentSettings::forget(store);
    m_forgotten = true;
    QDialog::accept();
}

void AgentSettingsDialog::kindChanged()
{
    const int index = std::max(0, int(m_kind->currentIndex()));
    for (int i = 0; i < m_pages.size(); ++i)
        m_pages[i]->setVisible(i == index);
    m_error->hide();
    fitHeight();
}

void AgentSettingsDialog::protocolChanged()
{
    const QString protocol = m_protocol->currentData().toString();
    // The key variable follows the protocol while it is the previous protocol's default (or empty).
    const QString env = m_keyEnv->text().trimmed();
    if (env.isEmpty() || env == AgentSettings::defaultKeyEnv(m_protocolShown))
        m_keyEnv->setText(AgentSettings::defaultKeyEnv(protocol));
    m_keyEnv->setPlaceholderText(AgentSettings::defaultKeyEnv(protocol));
    m_baseUrl->setPlaceholderText(tr("empty: %1").arg(defaultBaseUrl(protocol)));
    m_protocolShown = protocol;
    updateKeyEnvStatus();
}

void AgentSettingsDialog::keySourceChanged()
{
    const bool stored = m_keyStored->isChecked();
    m_keyEnv->setEnabled(!stored);
    m_key->setEnabled(stored);
    updateKeyEnvStatus();
}

void AgentSettingsDialog::updateKeyEnvStatus()
{
    const QString env = m_keyEnv->text().trimmed();
    if (m_keyStored->isChecked() || env.isEmpty()) {
        m_keyEnvStatus->hide();
        return fitHeight();
    }
    const bool set = !qEnvironmentVariableIsEmpty(env.toLocal8Bit().constData());
    const QString base = m_baseUrl->text().trimmed();
    const QString host = QUrl(base).host().toLower();
    const bool publicEndpoint = base.isEmpty() || host == QLatin1String("api.openai.com")
        || host == QLatin1String("api.anthropic.com");
    m_keyEnvStatus->setText(set
            ? tr("$%1 is set in this environment.").arg(env)
            : tr("$%1 is not set in the environment AutoKernel Studio was started in%2.")
                  .arg(env,
                      publicEndpoint ? tr(": the public endpoint will refuse to start without a key")
                                     : tr(" (fine for a local server that needs no key)")));
    m_keyEnvStatus->show();
    fitHeight();
}

} // namespace ak
