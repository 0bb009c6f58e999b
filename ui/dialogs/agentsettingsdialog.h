#pragma once

#include "services/agentsettings.h"

#include <QDialog>
#include <QList>

class QComboBox;
class QDialogButtonBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QRadioButton;
class QSpinBox;

namespace ak {

class TuneMemoryRow;

// Loop ▸ Agent…: what Loop ▸ Start runs — the agent (tune, llm, command, replay) with its fields, the
// devices and the Python interpreter — saved in the user's settings store (AgentSettings), not in a
// run. Prefilled from the saved settings, else from the shown run's run.json "agent". OK checks the
// fields (AgentSettings::check: the error names the field, focuses it and keeps the dialog open) and
// saves; "Use the Run's Agent" forgets the saved choice (and a stored key). The tune page shows what the
// tune agent remembers from earlier runs on this machine, with Forget… (TuneMemoryRow).
class AgentSettingsDialog : public QDialog
{
    Q_OBJECT
public:
    explicit AgentSettingsDialog(QWidget *parent = nullptr);

    // The saved settings when there are any, else the run's own agent (no run: tune).
    void prefill(const RunConfig *run);
    void setSettings(const AgentSettings &settings);
    // What the fields say (devices as far as they parse; accept() reports the rest).
    AgentSettings settings() const;
    // Where the values shown came from ("saved" or "run"), as a sentence.
    QString sourceText() const;
    QString errorText() const; // why OK was refused; empty when it was not
    bool forgotten() const { return m_forgotten; } // closed through "Use the Run's Agent"

    QComboBox *kindBox() const { return m_kind; }
    QComboBox *protocolBox() const { return m_protocol; }
    QLineEdit *baseUrlEdit() const { return m_baseUrl; }
    QLineEdit *modelEdit() const { return m_model; }
    QRadioButton *keyFromEnvironment() const { return m_keyFromEnv; }
    QRadioButton *keyStored() const { return m_keyStored; }
    QLineEdit *keyEnvEdit() const { return m_keyEnv; }
    QLineEdit *keyEdit() const { return m_key; }
    QLabel *keyNote() const { return m_keyNote; }
    QLabel *keyEnvStatus() const { return m_keyEnvStatus; }
    QLineEdit *commandEdit() const { return m_command; }
    QLineEdit *replayEdit() const { return m_replay; }
    QSpinBox *seedBox() const { return m_seed; }
    TuneMemoryRow *tuneMemoryRow() const { return m_tuneMemory; }
    QSpinBox *contextBox() const { return m_context; }
    QSpinBox *maxTokensBox() const { return m_maxTokens; }
    QLineEdit *devicesEdit() const { return m_devices; }
    QLineEdit *pythonEdit() const { return m_python; }
    QLineEdit *launcherEdit() const { return m_launcher; }
    QDialogButtonBox *buttons() const { return m_buttons; }
    void setKind(AgentConfig::Kind kind);

    // Checks the fields; valid ones are saved to the settings store and the dialog closes.
    void accept() override;
    // Forgets the saved settings (Loop ▸ Start goes back to run.json's agent) and closes.
    void useRunAgent();

private:
    // The constructor's sections, one per group of the dialog, called in the order the groups appear:
    // each sets up the widgets of its group and wires their signals.
    QLabel *createIntro(); // the text above the fields and the "Shown: …" line
    void createAgentChoice(); // the kind combo
    QWidget *createTunePage(); // seed and the tune memory
    QWidget *createLlmPage(); // server, model, limits, key, connection test
    QGroupBox *createKeyBox(QWidget *page); // the API key's source, with its status and note
    void addLimitRows(QFormLayout *form); // context and max tokens
    QWidget *createCommandPage();
    QWidget *createReplayPage();
    QGroupBox *createWhereBox(); // devices, Python, launcher
    void createErrorAndButtons();
    void layOut(QLabel *intro, QGroupBox *where);

    AgentSettings::Problem collect(AgentSettings *out) const;
    void showProblem(const AgentSettings::Problem &problem);
    void kindChanged();
    void protocolChanged();
    void keySourceChanged();
    void updateKeyEnvStatus();
    void fitHeight(); // as tall as what is shown (the page of the kind, notes, the error) needs

protected:
    void showEvent(QShowEvent *event) override;

private:
    QLabel *m_source;
    QComboBox *m_kind;
    QList<QWidget *> m_pages; // one per kind, in the combo's order; only the current one is shown
    QSpinBox *m_seed;
    TuneMemoryRow *m_tuneMemory;
    QSpinBox *m_context;
    QSpinBox *m_maxTokens;
    QComboBox *m_protocol;
    QLineEdit *m_baseUrl;
    QLineEdit *m_model;
    QRadioButton *m_keyFromEnv;
    QRadioButton *m_keyStored;
    QLineEdit *m_keyEnv;
    QLineEdit *m_key;
    QLabel *m_keyEnvStatus;
    QLabel *m_keyNote;
    QLineEdit *m_command;
    QLineEdit *m_replay;
    QLineEdit *m_devices;
    QLineEdit *m_python;
    QLineEdit *m_launcher;
    QLabel *m_error;
    QDialogButtonBox *m_buttons;
    QString m_protocolShown; // the protocol whose default key variable the field may hold
    bool m_forgotten = false;
};

} // namespace ak
