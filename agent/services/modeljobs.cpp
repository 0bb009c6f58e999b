#include "services/modeljobs.h"

#include "services/backgroundjob.h"

namespace ak {

namespace {

constexpr int CancelRepeatMs = 100;

} // namespace

void ModelJobs::Cancel::setWorker(WorkerClient *w)
{
    QMutexLocker lock(&mutex);
    worker = w;
    if (w && requested)
        w->cancel();
}

void ModelJobs::Cancel::cancelWorker()
{
    QMutexLocker lock(&mutex); // verify clears the pointer under this lock before the worker dies
    if (worker)
        worker->cancel();
}

ModelJobs::ModelJobs(QObject *parent)
    : QObject(parent)
    , m_verifyWork(&ModelVerifier::verify)
    , m_exportWork(&ModelVerifier::exportPackage)
    , m_cancel(std::make_shared<Cancel>())
{
    m_pool.setMaxThreadCount(2); // one verify and one export
    m_cancelAgain.setInterval(CancelRepeatMs);
    connect(&m_cancelAgain, &QTimer::timeout, this, [this] { m_cancel->cancelWorker(); });
}

ModelJobs::~ModelJobs()
{
    // The jobs call back into this object (progress): they must be over before it is gone.
    m_cancel->requested = true;
    do
        m_cancel->cancelWorker();
    while (!m_pool.waitForDone(CancelRepeatMs));
}

bool ModelJobs::verify(VerifyOptions options)
{
    if (m_verifying)
        return false;
    m_verifying = true;
    m_cancel = std::make_shared<Cancel>();
    const std::shared_ptr<Cancel> cancel = m_cancel;
    options.onWorker = [cancel](WorkerClient *w) { cancel->setWorker(w); };
    runInBackground(
        &m_pool, this,
        [this, work = m_verifyWork, options, cancel] {
            if (cancel->requested) { // cancelled while queued
                VerifyOutcome out;
                out.cancelled = true;
                out.error = QStringLiteral("cancelled");
                return out;
            }
            // Emitted on this pool thread; the receivers live on the GUI thread, so it is queued.
            return work(options, [this](const QString &message, double fraction) {
                Q_EMIT verifyProgress(message, fraction);
            });
        },
        [this](const VerifyOutcome &outcome) {
            m_cancelAgain.stop();
            m_verifying = false;
            Q_EMIT verifyFinished(outcome);
        });
    return true;
}

void ModelJobs::cancelVerify()
{
    if (!m_verifying)
        return;
    m_cancel->requested = true;
    m_cancel->cancelWorker();
    m_cancelAgain.start();
}

bool ModelJobs::exportPackage(const ExportOptions &options)
{
    if (m_exporting)
        return false;
    m_exporting = true;
    runInBackground(
        &m_pool, this, [work = m_exportWork, options] { return work(options); },
        [this](const ExportOutcome &outcome) {
            m_exporting = false;
            Q_EMIT exportFinished(outcome);
        });
    return true;
}

} // namespace ak
