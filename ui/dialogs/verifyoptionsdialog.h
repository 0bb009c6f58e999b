#pragma once

#include "loop/modelverifier.h"
#include "runsnapshot.h"

#include <QDialog>

class QCheckBox;
class QComboBox;
class QLabel;
class QListWidget;
class QSpinBox;

namespace ak {

// Model ▸ Verify With Options…: what `autokernel-cli verify` takes as flags — which kernels, the
// device, parity seeds, timing rounds, the mode the final set is chosen in (eager, or under
// torch.compile for a user who compiles), torch.compile on or off (a quick check without the minutes
// compile takes; off only in eager mode), and whether a model file changed since profiling may be
// verified. Seeds, rounds, mode and compile are remembered; the kernels are the open run's.
class VerifyOptionsDialog : public QDialog
{
    Q_OBJECT
public:
    explicit VerifyOptionsDialog(QWidget *parent = nullptr);

    void setRun(const RunSnapshot &run);
    // The options for the run set with setRun. Every kernel checked = `kernels` empty (all of them).
    VerifyOptions options() const;

    QListWidget *kernelList() const { return m_kernels; }
    QComboBox *deviceBox() const { return m_device; }
    QSpinBox *seedsBox() const { return m_seeds; }
    QSpinBox *roundsBox() const { return m_rounds; }
    QComboBox *modeBox() const { return m_mode; }
    QCheckBox *compileBox() const { return m_compile; }
    QCheckBox *allowChangedBox() const { return m_allowChanged; }
    QString errorText() const;

    void accept() override; // refuses (the dialog stays open, the reason shown) when no kernel is checked

private:
    QString m_runDir;
    QListWidget *m_kernels;
    QComboBox *m_device;
    QSpinBox *m_seeds;
    QSpinBox *m_rounds;
    QComboBox *m_mode;
    QCheckBox *m_compile;
    QCheckBox *m_allowChanged;
    QLabel *m_error;
};

} // namespace ak
