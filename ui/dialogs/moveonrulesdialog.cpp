#include "dialogs/moveonrulesdialog.h"

#include "experimentlog.h"
#include "widgets/errortint.h"
#include "widgets/wrappedlabel.h"

#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

namespace ak {

namespace {

constexpr int ShownChanges = 5;

QDoubleSpinBox *doubleBox(
    const QString &name, double max, int decimals, const QString &suffix, QWidget *parent)
{
    auto *box = new QDoubleSpinBox(parent);
    box->setObjectName(name);
    box->setRange(0, max);
    box->setDecimals(decimals);
    box->setSuffix(suffix);
    box->setSpecialValueText(QStringLiteral("off")); // shown at the minimum, 0
    box->setAccelerated(true);
    return box;
}

} // namespace

MoveOnRulesDialog::MoveOnRulesDialog(QWidget *parent)
    : QDialog(parent)
    , m_reverts(new QSpinBox(this))
    , m_roof(doubleBox(QStringLiteral("roof_pct"), 100, 1, QStringLiteral(" %"), this))
    , m_hours(doubleBox(QStringLiteral("hours_per_kernel"), 10000, 2, tr(" h"), this))
    , m_speedup(doubleBox(QStringLiteral("speedup_over_baseline"), 10000, 2, tr(" x"), this))
    , m_inModelMisses(new QSpinBox(this))
    , m_current(wrappedLabel(QString(), this))
    , m_warning(wrappedLabel(QString(), this))
    , m_error(wrappedLabel(QString(), this))
    , m_readOnly(wrappedLabel(QString(), this))
    , m_buttons(new QDialogButtonBox(
          QDialogButtonBox::Ok | QDialogButtonBox::Cancel | QDialogButtonBox::RestoreDefaults, this))
{
    setWindowTitle(tr("Move-on Rules"));
    setObjectName(QStringLiteral("MoveOnRulesDialog"));
    m_reverts->setObjectName(QStringLiteral("max_consecutive_reverts"));
    m_reverts->setRange(0, 1000000);
    m_reverts->setSpecialValueText(QStringLiteral("off"));
    m_inModelMisses->setObjectName(QStringLiteral("max_in_model_misses"));
    m_inModelMisses->setRange(0, 1000000);
    m_inModelMisses->setSpecialValueText(QStringLiteral("off"));
    m_inModelMisses->setToolTip(
        QStringLiteral("max_in_model_misses: leave the kernel after this many keeps in a row that beat "
                       "PyTorch in the harness but showed no gain inside the model (the in-model check "
                       "after a keep: the kernel alone against the model as written, beyond the noise)."));

    m_reverts->setToolTip(
        QStringLiteral("max_consecutive_reverts: leave the kernel after this many experiments in a row that "
                       "were not kept (revert, fail, crash, timeout, reject). A keep, or a revert you "
                       "make, starts the count again."));
    m_roof->setToolTip(
        QStringLiteral("roof_pct: leave the kernel once its best reaches this share of its roofline "
                       "(compute or memory bound). A percentage: 90 means 90 %."));
    m_speedup->setToolTip(
        QStringLiteral("speedup_over_baseline: leave the kernel once its best is this many times faster "
                       "than its own baseline. Must be above 1."));
    m_hours->setToolTip(
        QStringLiteral("hours_per_kernel: leave the kernel after this much work on it (agent time plus "
                       "benchmark time of its experiments; time the loop was stopped does not count)."));

    auto *intro = wrappedLabel(
        QStringLiteral("When the loop leaves a kernel for the next one. Any rule that fires is enough; "
                       "the goals are checked before the limits. <b>0 switches a rule off</b> (the box "
                       "shows \"off\"). A change takes effect at the loop's next experiment, without a "
                       "restart, and is recorded in the run (run.json and experiments.jsonl)."),
        this);
    intro->setTextFormat(Qt::RichText);

    auto *form = new QFormLayout;
    form->addRow(tr("Limit: reverts in a row"), m_reverts);
    form->addRow(tr("Goal: % of roof"), m_roof);
    form->addRow(tr("Goal: speedup over baseline"), m_speedup);
    form->addRow(tr("Limit: hours per kernel"), m_hours);
    form->addRow(tr("Limit: wins not seen in the model"), m_inModelMisses);

    m_current->setObjectName(QStringLiteral("currentRules"));
    m_warning->setObjectName(QStringLiteral("runJsonWarning"));
    m_error->setObjectName(QStringLiteral("error"));
    m_readOnly->setObjectName(QStringLiteral("readOnly"));
    for (QLabel *l : { m_warning, m_error }) {
        ErrorTint::apply(l);
        l->hide();
    }
    m_readOnly->hide();

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(m_error);
    layout->addWidget(m_current);
    layout->addWidget(m_warning);
    layout->addWidget(m_readOnly);
    layout->addWidget(m_buttons);

    connect(m_buttons, &QDialogButtonBox::accepted, this, &MoveOnRulesDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &MoveOnRulesDialog::reject);
    connect(m_buttons->button(QDialogButtonBox::RestoreDefaults), &QPushButton::clicked, this,
        [this] { setRules(MoveOnRules()); });
    m_buttons->button(QDialogButtonBox::RestoreDefaults)
        ->setToolTip(
            tr("5 reverts in a row, 90 % of roof, 2x over baseline, 2 h per kernel, 2 misses in the model"));
    setRules(MoveOnRules());
}

void MoveOnRulesDialog::setRun(const RunSnapshot &run)
{
    const MoveOnRules &rules = run.config.moveOn;
    const QString &why = run.config.moveOnWarning;
    const bool ok = why.isEmpty();
    setRules(rules);
    m_warning->setText(
        ok ? QString() : tr("%1. The loop uses the defaults shown; OK writes valid rules.").arg(why));
    m_warning->setVisible(!ok);

    QStringList lines;
    lines << tr("<b>Now:</b> %1.").arg(rules.summary().toHtmlEscaped());
    if (run.moveOnChanges.isEmpty()) {
        lines << tr("Never changed since the run was created.");
    } else {
        const int n = int(run.moveOnChanges.size());
        lines << (n == 1 ? tr("Changed once:") : tr("Changed %1 times (latest first):").arg(n));
        const int from = std::max(0, int(run.moveOnChanges.size()) - ShownChanges);
        for (int i = int(run.moveOnChanges.size()) - 1; i >= from; --i) {
            const MoveOnChange &c = run.moveOnChanges.at(i);
            lines << tr("&nbsp;&nbsp;%1 by %2: %3")
                         .arg(c.time.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")),
                             (c.by.isEmpty() ? QStringLiteral("(unknown)") : c.by).toHtmlEscaped(),
                             c.rules.summary().toHtmlEscaped());
        }
        if (from > 0)
            lines << tr("&nbsp;&nbsp;… %1 earlier (experiments.jsonl has them all)").arg(from);
    }
    m_current->setTextFormat(Qt::RichText);
    m_current->setText(lines.join(QStringLiteral("<br>")));
}

void MoveOnRulesDialog::setRules(const MoveOnRules &rules)
{
    m_reverts->setValue(rules.maxConsecutiveReverts);
    m_roof->setValue(rules.roofPct);
    m_hours->setValue(rules.hoursPerKernel);
    m_speedup->setValue(rules.speedupOverBaseline);
    m_inModelMisses->setValue(rules.maxInModelMisses);
    m_error->hide();
    m_error->clear();
}

MoveOnRules MoveOnRulesDialog::rules() const
{
    MoveOnRules r;
    r.maxConsecutiveReverts = m_reverts->value();
    r.roofPct = m_roof->value();
    r.hoursPerKernel = m_hours->value();
    r.speedupOverBaseline = m_speedup->value();
    r.maxInModelMisses = m_inModelMisses->value();
    return r;
}

void MoveOnRulesDialog::setEditable(bool editable, const QString &whyNot)
{
    m_editable = editable;
    for (QAbstractSpinBox *box :
        std::initializer_list<QAbstractSpinBox *> { m_reverts, m_roof, m_hours, m_speedup, m_inModelMisses })
        box->setReadOnly(!editable);
    m_buttons->button(QDialogButtonBox::Ok)->setVisible(editable);
    m_buttons->button(QDialogButtonBox::RestoreDefaults)->setVisible(editable);
    m_buttons->button(QDialogButtonBox::Cancel)->setText(editable ? tr("Cancel") : tr("Close"));
    m_readOnly->setText(editable ? QString() : tr("Read only: %1.").arg(whyNot));
    m_readOnly->setVisible(!editable);
}

QString MoveOnRulesDialog::currentText() const
{
    return m_current->text();
}

QString MoveOnRulesDialog::errorText() const
{
    return m_error->text();
}

void MoveOnRulesDialog::accept()
{
    if (!m_editable)
        return reject();
    QString why;
    if (!MoveOnRules::fromJson(rules().toJson(), nullptr, &why)) {
        m_error->setText(why);
        m_error->show();
        for (QAbstractSpinBox *box :
            std::initializer_list<QAbstractSpinBox *> { m_reverts, m_roof, m_hours, m_speedup }) {
            if (why.contains(box->objectName() + QLatin1Char(' '))) {
                box->setFocus();
                box->selectAll();
            }
        }
        return;
    }
    QDialog::accept();
}

} // namespace ak
