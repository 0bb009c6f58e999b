#include "dialogs/verifyoptionsdialog.h"

#include "runloader.h"
#include "widgets/errortint.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace ak {

VerifyOptionsDialog::VerifyOptionsDialog(QWidget *parent)
    : QDialog(parent)
    , m_kernels(new QListWidget(this))
    , m_device(new QComboBox(this))
    , m_seeds(new QSpinBox(this))
    , m_rounds(new QSpinBox(this))
    , m_mode(new QComboBox(this))
    , m_compile(new QCheckBox(
          QStringLiteral(
              "Also time torch.compile (max-autotune-no-cudagraphs), with and without the kernels"),
          this))
    , m_allowChanged(new QCheckBox(tr("Verify even if the model file changed since profiling"), this))
    , m_error(new QLabel(this))
{
    setObjectName(QStringLiteral("VerifyOptionsDialog"));
    setWindowTitle(tr("Verify With Options"));
    m_kernels->setObjectName(QStringLiteral("VerifyKernels"));
    m_device->addItem(tr("The run's device"), QString());
    m_device->addItem(QStringLiteral("cuda"), QStringLiteral("cuda"));
    m_device->addItem(QStringLiteral("cpu"), QStringLiteral("cpu"));
    const VerifyOptions defaults;
    QSettings settings;
    m_seeds->setRange(1, 20);
    m_seeds->setValue(settings.value(QStringLiteral("verify/seeds"), defaults.seeds).toInt());
    m_seeds->setToolTip(tr("Fresh seeded input draws: every output is compared on each"));
    m_rounds->setRange(3, 50);
    m_rounds->setValue(settings.value(QStringLiteral("verify/rounds"), defaults.rounds).toInt());
    m_rounds->setToolTip(tr("Alternating timing rounds per comparison; more rounds, less noise"));
    m_compile->setChecked(settings.value(QStringLiteral("verify/compile"), defaults.compile).toBool());
    m_compile->setToolTip(
        QStringLiteral("Compile takes minutes on a large model (75 s for the llama example on an H200); "
                       "without it the compile timings read \"not measured\""));
    m_mode->setObjectName(QStringLiteral("VerifyMode"));
    m_mode->addItem(tr("Eager: the kernels that make the eager model faster"), QStringLiteral("eager"));
    m_mode->addItem(
        tr("Compile: the kernels that make the torch.compile'd model faster"), QStringLiteral("compile"));
    m_mode->setToolTip(
        tr("Compile mode compiles the model with all kernels and without each (minutes per "
           "compile on a large model); the exported package then plugs them for torch.compile"));
    const int mode = m_mode->findData(settings.value(QStringLiteral("verify/mode"), defaults.mode));
    m_mode->setCurrentIndex(std::max(0, mode));
    // Compile mode cannot be verified without compiling.
    auto syncCompile = [this] {
        const bool compileMode = m_mode->currentData().toString() == QLatin1String("compile");
        if (compileMode)
            m_compile->setChecked(true);
        m_compile->setEnabled(!compileMode);
    };
    connect(m_mode, &QComboBox::currentIndexChanged, this, syncCompile);
    syncCompile();
    m_error->setObjectName(QStringLiteral("VerifyOptionsError"));
    ErrorTint::apply(m_error);
    m_error->hide();

    auto *form = new QFormLayout;
    form->addRow(tr("Kernels:"), m_kernels);
    form->addRow(tr("Device:"), m_device);
    form->addRow(tr("Parity seeds:"), m_seeds);
    form->addRow(tr("Timing rounds:"), m_rounds);
    form->addRow(tr("Choose the set for:"), m_mode);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Verify"));
    connect(buttons, &QDialogButtonBox::accepted, this, &VerifyOptionsDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(m_compile);
    layout->addWidget(m_allowChanged);
    layout->addWidget(m_error);
    layout->addWidget(buttons);
}

void VerifyOptionsDialog::setRun(const RunSnapshot &run)
{
    m_runDir = run.runDir;
    m_kernels->clear();
    for (const KernelRecord &k : run.kernels) {
        auto *item = new QListWidgetItem(
            tr("%1 (%2 %% of the model)").arg(KernelRecord::keyOf(k.folder)).arg(100 * k.share, 0, 'f', 1),
            m_kernels);
        item->setData(Qt::UserRole, KernelRecord::keyOf(k.folder));
        item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
        item->setCheckState(Qt::Checked);
    }
}

VerifyOptions VerifyOptionsDialog::options() const
{
    VerifyOptions o;
    o.runDir = m_runDir;
    o.device = m_device->currentData().toString();
    o.seeds = m_seeds->value();
    o.rounds = m_rounds->value();
    o.compile = m_compile->isChecked();
    o.mode = m_mode->currentData().toString();
    o.allowChangedModel = m_allowChanged->isChecked();
    QStringList chosen;
    for (int i = 0; i < m_kernels->count(); ++i)
        if (m_kernels->item(i)->checkState() == Qt::Checked)
            chosen << m_kernels->item(i)->data(Qt::UserRole).toString();
    if (chosen.size() < m_kernels->count())
        o.kernels = chosen; // all checked: every kernel, as the CLI without --kernels
    return o;
}

QString VerifyOptionsDialog::errorText() const
{
    return m_error->isHidden() ? QString() : m_error->text();
}

void VerifyOptionsDialog::accept()
{
    bool anyChecked = m_kernels->count() == 0;
    for (int i = 0; i < m_kernels->count(); ++i)
        anyChecked = anyChecked || m_kernels->item(i)->checkState() == Qt::Checked;
    if (!anyChecked) {
        m_error->setText(tr("Check at least one kernel to verify."));
        m_error->show();
        return;
    }
    QSettings settings;
    settings.setValue(QStringLiteral("verify/seeds"), m_seeds->value());
    settings.setValue(QStringLiteral("verify/rounds"), m_rounds->value());
    settings.setValue(QStringLiteral("verify/compile"), m_compile->isChecked());
    settings.setValue(QStringLiteral("verify/mode"), m_mode->currentData().toString());
    m_error->hide();
    QDialog::accept();
}

} // namespace ak
