#pragma once

#include "moveonrules.h"
#include "runsnapshot.h"

#include <QDialog>

class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;

namespace ak {

// Loop ▸ Move-on Rules…: the run's four move-on thresholds (run.json "move_on") in spin boxes, 0
// meaning "rule off", with the current rules and who changed them last. It only edits values: on OK
// (values checked like MoveOnRules::fromJson, the error naming the field keeps the dialog open) the
// window hands rules() to its LoopControl. Read-only, with the reason, when that control cannot
// change the rules.
class MoveOnRulesDialog : public QDialog
{
    Q_OBJECT
public:
    explicit MoveOnRulesDialog(QWidget *parent = nullptr);

    // Prefills from the run: its rules (run.json's "move_on", defaults where absent), a warning when
    // run.json's "move_on" is malformed, and the logged changes.
    void setRun(const RunSnapshot &run);
    void setRules(const MoveOnRules &rules);
    MoveOnRules rules() const;
    // false: the values are shown but cannot be changed; `whyNot` says why.
    void setEditable(bool editable, const QString &whyNot = QString());
    bool isEditable() const { return m_editable; }

    QSpinBox *revertsBox() const { return m_reverts; }
    QDoubleSpinBox *roofBox() const { return m_roof; }
    QDoubleSpinBox *hoursBox() const { return m_hours; }
    QDoubleSpinBox *speedupBox() const { return m_speedup; }
    QSpinBox *inModelMissesBox() const { return m_inModelMisses; }
    QDialogButtonBox *buttons() const { return m_buttons; }
    QString currentText() const; // the "Now:" and history lines
    QString errorText() const; // why OK was refused; empty when it was not

    void accept() override;

private:
    QSpinBox *m_reverts;
    QDoubleSpinBox *m_roof;
    QDoubleSpinBox *m_hours;
    QDoubleSpinBox *m_speedup;
    QSpinBox *m_inModelMisses;
    QLabel *m_current;
    QLabel *m_warning;
    QLabel *m_error;
    QLabel *m_readOnly;
    QDialogButtonBox *m_buttons;
    bool m_editable = true;
};

} // namespace ak
