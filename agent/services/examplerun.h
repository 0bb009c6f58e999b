#pragma once

#include <QObject>
#include <QString>
#include <QStringList>

#include <memory>

namespace ak {

// The run directory of a bundled example model (resources/examples/: gpt2, llama, bert, cnn) for this
// machine: <baseDir>/<name>-<device>, device "cuda" when a GPU is detected, else "cpu". start() finds
// it or creates it. With `model` and `runDir` set (File ▸ New Run…) it creates the run of any model
// file in that folder instead, which must not hold a run yet (RunCreator: profile, kernel folders,
// profile.json), all off the GUI thread, and reports through signals. The run is created in a hidden
// temporary folder next to it and renamed into place only when complete, so a failed, cancelled or
// interrupted creation never leaves a half-made example that would be opened next time.
class ExampleRun : public QObject
{
    Q_OBJECT
public:
    struct Options
    {
        QString name; // a bundled example (names()); with `model`, only the name the window shows
        QString model; // a model file (get_model() / get_inputs()); empty: the bundled example `name`
        QString runDir; // the run folder to create (absent or empty); empty: runDirFor(), found or created
        QString dtype; // "bf16" | "fp16" | "fp32" | "" (the model's choice)
        // A recording (RunRecording JSON; recordingPath() for a bundled one): restored into
        // <baseDir>/<name> instead of profiling, and found there afterwards.
        QString recording;
        QString baseDir; // empty: defaultBaseDir()
        QString device; // "cuda" | "cpu" | "" (detect: cuda when a GPU is found, else cpu)
        QString python; // interpreter with torch; empty: PythonLocator's order
        int top = 5; // kernel folders
        int iterations = 3;
        int warmup = 2;
        int timeoutMs = 600000;
    };

    // The outcome, delivered on the GUI thread.
    struct Result
    {
        bool ok = false;
        bool created = false; // false: the run already existed and was only found
        QString runDir;
        QString error; // one paragraph for the window
        QString details; // the Python traceback, for the log
    };

    explicit ExampleRun(const Options &options, QObject *parent = nullptr);
    ~ExampleRun() override; // cancels a creation in progress (the worker is stopped)

    // The bundled examples, from the compiled-in resources.
    static QStringList names();
    // The bundled recordings of real runs (resources/recordings/NAME.json), and where one is.
    static QStringList recordings();
    static QString recordingPath(const QString &name);
    // <AppLocalDataLocation>/examples
    static QString defaultBaseDir();
    // <baseDir>/<name>-<device>
    static QString runDirFor(const Options &options, const QString &device);

    const Options &options() const { return m_options; }
    void start();
    void cancel();
    bool isRunning() const { return m_running; }

Q_SIGNALS:
    void progress(const QString &message);
    void finished(const ak::ExampleRun::Result &result);

private:
    struct Shared;
    static Result work(const Options &options, const std::shared_ptr<Shared> &shared);
    static Result restoreRecording(const Options &options, const std::shared_ptr<Shared> &shared);
    static bool profileInto(const Options &options, const QString &device, const QString &outDir,
        const std::shared_ptr<Shared> &shared, Result &r);

    Options m_options;
    std::shared_ptr<Shared> m_shared;
    bool m_running = false;
};

} // namespace ak

Q_DECLARE_METATYPE(ak::ExampleRun::Result)
