#include "roofsaction.h"

#include "devicedetector.h"
#include "pythonlocator.h"
#include "roofmeter.h"
#include "services/backgroundjob.h"
#include "workerclient.h"

#include <QAction>

namespace ak {

namespace {

struct Outcome
{
    bool ok = false;
    QString text;
};

Outcome measureHere()
{
    const PythonLocator::Choice python = PythonLocator().locate();
    if (!python.ok())
        return { false, QObject::tr("roofs: no Python with torch: %1").arg(python.error) };
    const DeviceInfo spec = DeviceDetector::detect(0);
    RoofMeter::Request request;
    request.device = spec.available && spec.vendor != QLatin1String("cpu") ? QStringLiteral("cuda")
                                                                           : QStringLiteral("cpu");
    request.dtype = RoofMeter::dtypeFor(request.device, QString());
    request.force = true;
    WorkerClient worker;
    worker.setPython(python.python);
    MeasuredRoofs roofs;
    QString error;
    const bool ok = RoofMeter::measure(&worker, request, &roofs, &error);
    worker.stop();
    if (!ok)
        return { false, error };
    QString text = QObject::tr("measured roofs of %1: %2").arg(request.device, roofs.summary());
    if (spec.bandwidthGBs > 0)
        text += QObject::tr(" (spec sheet: %1 GB/s)").arg(spec.bandwidthGBs, 0, 'f', 0);
    return { true, text };
}

} // namespace

RoofsAction::RoofsAction(QObject *parent)
    : QObject(parent)
    , m_action(new QAction(tr("Measure Device &Roofs"), this))
{
    m_action->setObjectName(QStringLiteral("MeasureRoofsAction"));
    m_action->setToolTip(tr("Measure what this machine's device reaches (a large copy's bandwidth, the best "
                            "matmul): % of roof is taken against it. Loops measure on a device's first use "
                            "and cache it; this measures again."));
    connect(m_action, &QAction::triggered, this, &RoofsAction::measure);
}

void RoofsAction::measure()
{
    m_action->setEnabled(false);
    runInBackground(
        this, [] { return measureHere(); },
        [this](const Outcome &o) {
            m_action->setEnabled(true);
            if (o.ok)
                Q_EMIT measured(o.text);
            else
                Q_EMIT failed(o.text);
        });
}

} // namespace ak
