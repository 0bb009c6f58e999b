#pragma once

#include "services/examplerun.h"

#include <QDialog>

class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace ak {

// File ▸ New Run…: what `autokernel-cli profile` takes, as a form — the model (a file with
// get_model() and get_inputs(), or a bundled example), device, dtype, Python, how many kernel
// folders, and the run's folder (suggested from the model's name until the user types one). OK stays
// disabled while the choice cannot work, and the line under the form names the field and why.
class NewRunDialog : public QDialog
{
    Q_OBJECT
public:
    explicit NewRunDialog(QWidget *parent = nullptr);

    ExampleRun::Options options() const;
    // Why OK is disabled ("Model file: /x/y.py does not exist."); empty when the choice can run.
    QString problem() const;

    // The model: a file (setModelFile) or a bundled example by name.
    void setModelFile(const QString &path);
    void setExample(const QString &name);
    void setRunDir(const QString &dir);
    // A model-file run that could not be created, offered again to fix rather than to retype: its
    // model, device, dtype, Python and folder count (a fresh run folder is suggested).
    void offerAgain(const ExampleRun::Options &failed);
    QComboBox *sourceBox() const { return m_source; }
    QComboBox *deviceBox() const { return m_device; }
    QComboBox *dtypeBox() const { return m_dtype; }
    QLineEdit *pythonEdit() const { return m_python; }
    QLineEdit *runDirEdit() const { return m_runDir; }
    QSpinBox *topBox() const { return m_top; }
    bool canAccept() const;

    // Where suggested run folders go: <AppLocalDataLocation>/runs.
    static QString defaultRunsDir();

private:
    void sourceChanged();
    void suggestRunDir();
    void validate();

    QComboBox *m_source;
    QLineEdit *m_model;
    QWidget *m_modelRow;
    QComboBox *m_device;
    QComboBox *m_dtype;
    QLineEdit *m_python;
    QSpinBox *m_top;
    QLineEdit *m_runDir;
    bool m_runDirChosen = false; // the user typed or browsed one: no more suggestions
    QLabel *m_problem;
    QDialogButtonBox *m_buttons;
};

} // namespace ak
