#pragma once

#include "loop/modelverifier.h"

#include <QMutex>
#include <QObject>
#include <QThreadPool>
#include <QTimer>

#include <atomic>
#include <functional>
#include <memory>

namespace ak {

// The model view's Verify and Export, off the GUI thread on a pool of their own (a verify takes
// minutes and must not queue loads and diffs behind it). Progress reaches the GUI through a queued
// signal; the outcomes arrive on the GUI thread as value types. One verify and one export at a time.
class ModelJobs : public QObject
{
    Q_OBJECT
public:
    using VerifyWork = std::function<VerifyOutcome(const VerifyOptions &, const WorkerClient::ProgressFn &)>;
    using ExportWork = std::function<ExportOutcome(const ExportOptions &)>;

    explicit ModelJobs(QObject *parent = nullptr);
    ~ModelJobs() override; // cancels a running verify and waits for the pool

    // Defaults: ModelVerifier::verify and ModelVerifier::exportPackage. Tests give short fakes.
    void setVerifyWork(VerifyWork work) { m_verifyWork = std::move(work); }
    void setExportWork(ExportWork work) { m_exportWork = std::move(work); }

    // False (and nothing starts) while the same kind of job runs.
    bool verify(VerifyOptions options);
    bool exportPackage(const ExportOptions &options);
    // Ends the running verify through WorkerClient::cancel(); its outcome then says "cancelled".
    void cancelVerify();

    bool isVerifying() const { return m_verifying; }
    bool isExporting() const { return m_exporting; }

Q_SIGNALS:
    void verifyProgress(const QString &message, double fraction); // fraction < 0: not said
    void verifyFinished(const ak::VerifyOutcome &outcome);
    void exportFinished(const ak::ExportOutcome &outcome);

private:
    // Shared with the job's thread: the worker verify created (set and cleared through
    // VerifyOptions::onWorker) and whether the user asked to cancel.
    struct Cancel
    {
        QMutex mutex;
        WorkerClient *worker = nullptr;
        std::atomic<bool> requested { false };
        void setWorker(WorkerClient *w);
        void cancelWorker();
    };

    QThreadPool m_pool;
    VerifyWork m_verifyWork;
    ExportWork m_exportWork;
    std::shared_ptr<Cancel> m_cancel;
    QTimer m_cancelAgain; // re-asks until the verify ends: WorkerClient drops a cancel that finds it idle
    bool m_verifying = false;
    bool m_exporting = false;
};

} // namespace ak
