#include "roofmeter.h"

#include "workerclient.h"

#include <nlohmann/json.hpp>

namespace ak {

QString RoofMeter::dtypeFor(const QString &device, const QString &runDtype)
{
    Precision p;
    if (parsePrecision(runDtype, &p)
        && (p == Precision::BF16 || p == Precision::FP16 || p == Precision::FP32))
        return precisionName(p);
    return device.startsWith(QLatin1String("cuda")) ? QStringLiteral("bf16") : QStringLiteral("fp32");
}

bool RoofMeter::measure(WorkerClient *worker, const Request &request, MeasuredRoofs *out, QString *error)
{
    nlohmann::json args = nlohmann::json::object();
    args["device"] = request.device.section(QLatin1Char(':'), 0, 0).toStdString();
    // As asked: the op names a dtype it does not measure (the caller normalises with dtypeFor()).
    args["dtype"] = request.dtype.isEmpty() ? dtypeFor(request.device, QString()).toStdString()
                                            : request.dtype.toStdString();
    args["force"] = request.force;
    const WorkerReply r = worker->request(QStringLiteral("roofs"), args, request.timeoutSec * 1000);
    if (r.status != WorkerReply::Status::Ok) {
        if (error)
            *error = QStringLiteral("measuring the roofs of %1 failed: %2").arg(request.device, r.error);
        return false;
    }
    const MeasuredRoofs m = MeasuredRoofs::fromJson(r.result);
    if (!m.known()) {
        if (error)
            *error = QStringLiteral("the roofs op measured nothing on %1").arg(request.device);
        return false;
    }
    *out = m;
    return true;
}

} // namespace ak
