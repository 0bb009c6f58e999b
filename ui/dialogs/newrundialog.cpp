#include "dialogs/newrundialog.h"

#include "dialogs/browserow.h"
#include "widgets/errortint.h"

#include <QComboBox>
#include <QDateTime>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QStandardPaths>
#include <QVBoxLayout>

namespace ak {

namespace {

constexpr int kModelFile = 0; // the source combo's first entry; bundled examples follow
constexpr qint64 kMaxModelBytes = 4 << 20; // a model file is source code; read at most this to check it

} // namespace

NewRunDialog::NewRunDialog(QWidget *parent)
    : QDialog(parent)
    , m_source(new QComboBox(this))
    , m_model(new QLineEdit(this))
    , m_device(new QComboBox(this))
    , m_dtype(new QComboBox(this))
    , m_python(new QLineEdit(this))
    , m_top(new QSpinBox(this))
    , m_runDir(new QLineEdit(this))
    , m_problem(new QLabel(this))
    , m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this))
{
    setObjectName(QStringLiteral("NewRunDialog"));
    setWindowTitle(tr("New Run"));
    m_source->setObjectName(QStringLiteral("NewRunSource"));
    m_source->addItem(tr("A model file…"));
    for (const QString &name : ExampleRun::names())
        m_source->addItem(tr("Bundled example: %1").arg(name), name);
    m_model->setObjectName(QStringLiteral("NewRunModel"));
    m_model->setPlaceholderText(tr("model.py defining get_model() and get_inputs()"));
    m_device->setObjectName(QStringLiteral("NewRunDevice"));
    m_device->addItem(tr("Detect (the GPU when there is one)"), QString());
    m_device->addItem(tr("GPU (cuda)"), QStringLiteral("cuda"));
    m_device->addItem(tr("CPU"), QStringLiteral("cpu"));
    m_dtype->setObjectName(QStringLiteral("NewRunDtype"));
    m_dtype->addItem(tr("The model's own"), QString());
    for (const char *d : { "bf16", "fp16", "fp32" })
        m_dtype->addItem(QLatin1String(d), QLatin1String(d));
    m_python->setObjectName(QStringLiteral("NewRunPython"));
    m_python->setPlaceholderText(tr("found automatically ($AUTOKERNEL_PYTHON, then python3 with torch)"));
    m_top->setObjectName(QStringLiteral("NewRunTop"));
    m_top->setRange(1, 100);
    m_top->setValue(10);
    m_top->setToolTip(tr("Kernel folders to create, largest share of the model's time first"));
    m_runDir->setObjectName(QStringLiteral("NewRunFolder"));
    m_problem->setObjectName(QStringLiteral("NewRunProblem"));
    m_problem->setWordWrap(true);
    ErrorTint::apply(m_problem);

    QPushButton *browseModel = nullptr, *browsePython = nullptr, *browseRunDir = nullptr;
    auto *form = new QFormLayout;
    form->addRow(tr("Model"), m_source);
    m_modelRow = withBrowse(m_model, &browseModel, this);
    form->addRow(tr("Model file"), m_modelRow);
    form->addRow(tr("Device"), m_device);
    form->addRow(tr("Dtype"), m_dtype);
    form->addRow(tr("Python"), withBrowse(m_python, &browsePython, this));
    form->addRow(tr("Kernel folders"), m_top);
    form->addRow(tr("Run folder"), withBrowse(m_runDir, &browseRunDir, this));
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_problem);
    layout->addWidget(m_buttons);
    m_buttons->button(QDialogButtonBox::Ok)->setText(tr("Profile"));

    connect(browseModel, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(
            this, tr("Model File"), m_model->text(), tr("Python files (*.py);;All files (*)"));
        if (!f.isEmpty())
            setModelFile(f);
    });
    connect(browsePython, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Python Interpreter"), m_python->text());
        if (!f.isEmpty())
            m_python->setText(f);
    });
    connect(browseRunDir, &QPushButton::clicked, this, [this] {
        const QString d = QFileDialog::getExistingDirectory(
            this, tr("Folder for the New Run"), QFileInfo(m_runDir->text()).absolutePath());
        if (!d.isEmpty())
            setRunDir(d);
    });
    connect(m_runDir, &QLineEdit::textEdited, this, [this] { m_runDirChosen = true; });
    connect(m_source, &QComboBox::currentIndexChanged, this, &NewRunDialog::sourceChanged);
    connect(m_device, &QComboBox::currentIndexChanged, this, &NewRunDialog::suggestRunDir);
    for (QLineEdit *e : { m_model, m_python, m_runDir })
        connect(e, &QLineEdit::textChanged, this, &NewRunDialog::validate);
    connect(m_model, &QLineEdit::textChanged, this, &NewRunDialog::suggestRunDir);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    sourceChanged();
}

QString NewRunDialog::defaultRunsDir()
{
    return QDir(QStandardPaths::writableLocation(QStandardPaths::AppLocalDataLocation))
        .filePath(QStringLiteral("runs"));
}

void NewRunDialog::setModelFile(const QString &path)
{
    m_source->setCurrentIndex(kModelFile);
    m_model->setText(QDir::toNativeSeparators(path));
}

void NewRunDialog::setExample(const QString &name)
{
    const int i = m_source->findData(name);
    if (i > 0)
        m_source->setCurrentIndex(i);
}

void NewRunDialog::offerAgain(const ExampleRun::Options &failed)
{
    setModelFile(failed.model);
    if (const int i = m_device->findData(failed.device); i >= 0)
        m_device->setCurrentIndex(i);
    if (const int i = m_dtype->findData(failed.dtype); i >= 0)
        m_dtype->setCurrentIndex(i);
    m_python->setText(failed.python);
    m_top->setValue(failed.top);
}

void NewRunDialog::setRunDir(const QString &dir)
{
    m_runDirChosen = true;
    m_runDir->setText(QDir::toNativeSeparators(dir));
}

void NewRunDialog::sourceChanged()
{
    m_modelRow->setEnabled(m_source->currentIndex() == kModelFile);
    suggestRunDir();
    validate();
}

void NewRunDialog::suggestRunDir()
{
    if (m_runDirChosen)
        return;
    const QString stem = m_source->currentIndex() == kModelFile
        ? QFileInfo(m_model->text()).completeBaseName()
        : m_source->currentData().toString();
    if (stem.isEmpty()) {
        m_runDir->clear();
        return;
    }
    const QString device = m_device->currentData().toString();
    const QString name
        = QStringLiteral("%1%2-%3").arg(stem, device.isEmpty() ? QString() : QLatin1Char('-') + device,
            QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
    m_runDir->setText(QDir::toNativeSeparators(QDir(defaultRunsDir()).filePath(name)));
}

QString NewRunDialog::problem() const
{
    if (m_source->currentIndex() == kModelFile) {
        const QString path = m_model->text().trimmed();
        if (path.isEmpty())
            return tr("Model file: choose a Python file that defines get_model() and get_inputs().");
        const QFileInfo f(path);
        if (!f.exists())
            return tr("Model file: %1 does not exist.").arg(path);
        if (!f.isFile())
            return tr("Model file: %1 is not a file.").arg(path);
        if (f.suffix() != QLatin1String("py"))
            return tr("Model file: %1 is not a Python file (.py).").arg(path);
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return tr("Model file: cannot read %1: %2.").arg(path, file.errorString());
        const QByteArray source = file.read(kMaxModelBytes);
        for (const char *needed : { "get_model", "get_inputs" })
            if (!source.contains(needed))
                return tr("Model file: %1 defines no %2(); the profiler calls get_model() for the module and "
                          "get_inputs() for its arguments.")
                    .arg(f.fileName(), QLatin1String(needed));
    }
    const QString python = m_python->text().trimmed();
    if (!python.isEmpty() && !QFileInfo(python).isExecutable())
        return tr("Python: %1 is not an executable file.").arg(python);
    const QString dir = m_runDir->text().trimmed();
    if (dir.isEmpty())
        return tr("Run folder: choose where the new run goes.");
    const QFileInfo d(dir);
    if (d.exists() && !d.isDir())
        return tr("Run folder: %1 is a file.").arg(dir);
    if (QFileInfo::exists(QDir(dir).filePath(QStringLiteral("run.json"))))
        return tr("Run folder: %1 already holds a run (open it with File ▸ Open Run…).").arg(dir);
    if (d.isDir() && !QDir(dir).isEmpty(QDir::AllEntries | QDir::Hidden | QDir::NoDotAndDotDot))
        return tr("Run folder: %1 is not empty; a new run needs a new or empty folder.").arg(dir);
    return QString();
}

bool NewRunDialog::canAccept() const
{
    return m_buttons->button(QDialogButtonBox::Ok)->isEnabled();
}

void NewRunDialog::validate()
{
    const QString why = problem();
    m_problem->setText(why);
    m_problem->setVisible(!why.isEmpty());
    m_buttons->button(QDialogButtonBox::Ok)->setEnabled(why.isEmpty());
}

ExampleRun::Options NewRunDialog::options() const
{
    ExampleRun::Options o;
    if (m_source->currentIndex() == kModelFile) {
        const QFileInfo f(m_model->text().trimmed());
        o.model = f.absoluteFilePath();
        o.name = f.completeBaseName();
    } else {
        o.name = m_source->currentData().toString();
    }
    o.runDir = QDir(m_runDir->text().trimmed()).absolutePath();
    o.device = m_device->currentData().toString();
    o.dtype = m_dtype->currentData().toString();
    o.python = m_python->text().trimmed();
    o.top = m_top->value();
    return o;
}

} // namespace ak
