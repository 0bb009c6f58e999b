#include "profilereport.h"

#include "amdahl.h"
#include "jsonfield.h"
#include "opclassifier.h"

#include <cmath>

namespace ak {

namespace {

using Json = nlohmann::json;

Json strings(const QStringList &l)
{
    Json a = Json::array();
    for (const QString &s : l)
        a.push_back(s.toStdString());
    return a;
}

OpCall callFrom(const Json &row)
{
    OpCall c;
    c.kernelName = jsonfield::text(row, "name");
    c.atenOp = jsonfield::text(row, "aten_op");
    c.module = jsonfield::text(row, "module");
    c.opStack = jsonfield::texts(row, "op_stack");
    if (const Json *s = jsonfield::array(row, "shapes")) {
        for (const Json &shape : *s) {
            std::vector<int64_t> dims;
            if (shape.is_array()) {
                for (const Json &d : shape)
                    if (d.is_number_integer())
                        dims.push_back(d.get<int64_t>());
            }
            c.shapes.push_back(dims);
        }
    }
    if (const Json *s = jsonfield::array(row, "dtypes")) {
        for (const Json &v : *s)
            c.dtypes << (v.is_string() ? QString::fromStdString(v.get<std::string>()) : QString());
    }
    c.functions = jsonfield::texts(row, "functions");
    if (const Json *s = jsonfield::array(row, "call_sites"))
        c.callSites = *s;
    if (const Json *s = jsonfield::array(row, "covers"))
        c.covers = *s;
    if (const Json *s = jsonfield::array(row, "concrete_inputs")) {
        for (const Json &v : *s) {
            if (v.is_boolean())
                c.concreteInputs << v.get<bool>();
            else if (v.is_number())
                c.concreteInputs << v.get<double>();
            else if (v.is_string())
                c.concreteInputs << QString::fromStdString(v.get<std::string>());
            else
                c.concreteInputs << QVariant();
        }
    }
    return c;
}

double finiteOrZero(double v)
{
    return std::isfinite(v) ? v : 0.0;
}

// One kernel row of the worker's reply as the report keeps it: the record, its call and its roof.
struct ProfiledRow
{
    KernelRecord k;
    OpCall c;
    RooflineEstimate roof;
};

// The dtype a kernel is judged in: its first float input's, unless the row is part of a module's or
// function's op. Such a row (RMSNorm's pow/mean/mul, a rotary's cat) takes the model's activations,
// and such code often upcasts inside (x.float()): the fp32 of its aten ops is not the dtype the
// module gets, and a kernel judged in fp32 would then not be plugged into the bf16 model.
QString judgedDtype(const OpCall &c, const OpClassifier::Result &cls, const QString &modelDtype)
{
    const bool wholeOp = !modelDtype.isEmpty()
        && (cls.reason.startsWith(QLatin1String("module "))
            || cls.reason.startsWith(QLatin1String("function ")));
    for (const QString &d : wholeOp ? QStringList() : c.dtypes) {
        if (d == QLatin1String("bf16") || d == QLatin1String("fp16") || d == QLatin1String("fp32"))
            return d;
    }
    return modelDtype;
}

// Classifies the row and estimates its roof against `device`.
ProfiledRow profiledRow(const Json &row, double timeUs, const QString &modelDtype, const DeviceInfo &device)
{
    ProfiledRow it;
    it.c = callFrom(row);
    const OpClassifier::Result cls = OpClassifier::classify(it.c);
    it.roof = Roofline::estimate(it.c, cls.opType, modelDtype, device);
    // A memset/memcpy an op issues besides its main kernel does not carry the op's work: giving it
    // the op's floor would claim a roof it cannot have.
    if (it.c.kernelName.startsWith(QLatin1String("Memset"))
        || it.c.kernelName.startsWith(QLatin1String("Memcpy"))) {
        it.roof = RooflineEstimate();
        it.roof.why = QStringLiteral("auxiliary memset/memcpy of %1").arg(it.c.atenOp);
    }
    KernelRecord &k = it.k;
    k.name = it.c.kernelName;
    k.opType = cls.opType;
    k.classifiedBy = cls.reason;
    k.atenOp = it.c.atenOp;
    k.module = it.c.module;
    for (const auto &s : it.c.shapes)
        k.shapes << ProfileReport::shapeText(s);
    k.dtype = judgedDtype(it.c, cls, modelDtype);
    k.timeUs = finiteOrZero(timeUs);
    k.calls = int(std::lround(row.value("calls", 1.0)));
    k.flops = it.roof.flops;
    k.bytes = it.roof.bytes;
    k.floorUs = it.roof.known ? it.roof.floorUs : 0.0;
    k.bound = it.roof.known ? it.roof.bound : QString();
    return it;
}

// Ranks the rows (Amdahl) into p's kernels, with calls and roofs in the same order, and the total.
void rankInto(QVector<ProfiledRow> items, ProfileReport *p)
{
    QVector<KernelRecord> records;
    for (const ProfiledRow &it : items)
        records.push_back(it.k);
    Amdahl::rank(records, p->fraction);
    // Amdahl::rank sorts stably by time; re-pair calls and roofs with their records by the same order.
    std::stable_sort(items.begin(), items.end(),
        [](const ProfiledRow &a, const ProfiledRow &b) { return a.k.timeUs > b.k.timeUs; });
    for (int i = 0; i < items.size(); ++i) {
        p->calls.push_back(items[i].c);
        p->roofs.push_back(items[i].roof);
        p->totalUs += records[i].timeUs;
    }
    p->kernels = records;
}

} // namespace

QString ProfileReport::shapeText(const std::vector<int64_t> &shape)
{
    QStringList dims;
    for (int64_t d : shape)
        dims << QString::number(d);
    return QLatin1Char('[') + dims.join(QStringLiteral(", ")) + QLatin1Char(']');
}

bool ProfileReport::fromWorker(const Json &r, const DeviceInfo &device, ProfileReport *out, QString *error)
{
    auto fail = [error](const QString &m) {
        if (error)
            *error = QStringLiteral("profile reply: ") + m;
        return false;
    };
    if (!r.is_object())
        return fail(QStringLiteral("not an object"));
    const Json *rows = jsonfield::array(r, "kernels");
    if (!rows)
        return fail(QStringLiteral("field \"kernels\" missing or not an array"));
    ProfileReport p;
    p.model = jsonfield::text(r, "model");
    p.modelPath = jsonfield::text(r, "model_path");
    p.activity = jsonfield::text(r, "activity");
    p.dtype = jsonfield::text(r, "dtype");
    p.torchVersion = jsonfield::text(r, "torch");
    p.python = jsonfield::text(r, "python");
    p.warmup = r.value("warmup", 0);
    p.iterations = r.value("iterations", 0);
    p.wallMs = r.value("wall_time_ms", 0.0);
    p.device = device;

    QVector<ProfiledRow> items;
    for (size_t i = 0; i < rows->size(); ++i) {
        const Json &row = (*rows)[i];
        const std::optional<double> timeUs = jsonfield::strict::number(row, "time_us");
        if (!timeUs)
            return fail(QStringLiteral("kernels[%1].time_us missing or not a number").arg(i));
        items.push_back(profiledRow(row, *timeUs, p.dtype, device));
    }
    rankInto(items, &p);
    *out = p;
    return true;
}

double ProfileReport::projected(int topK) const
{
    return Amdahl::projectedSpeedup(kernels, topK, fraction);
}

Json ProfileReport::toJson() const
{
    Json kernelsJson = Json::array();
    for (int i = 0; i < kernels.size(); ++i) {
        const KernelRecord &k = kernels[i];
        const OpCall &c = calls[i];
        const RooflineEstimate &roof = roofs[i];
        Json shapes = Json::array();
        for (const auto &s : c.shapes)
            shapes.push_back(s);
        Json o { { "rank", k.rank }, { "name", k.name.toStdString() }, { "op_type", k.opType.toStdString() },
            { "classified_by", k.classifiedBy.toStdString() }, { "aten_op", k.atenOp.toStdString() },
            { "op_stack", strings(c.opStack) }, { "module", k.module.toStdString() }, { "shapes", shapes },
            { "dtypes", strings(c.dtypes) }, { "dtype", k.dtype.toStdString() }, { "time_us", k.timeUs },
            { "share", k.share }, { "calls", k.calls }, { "flops", k.flops }, { "bytes", k.bytes },
            { "floor_us", k.floorUs }, { "bound", k.bound.toStdString() },
            { "roofline",
                roof.known ? roof.formula.toStdString()
                           : QString(QStringLiteral("unknown: ") + roof.why).toStdString() },
            { "max_speedup", k.maxSpeedup }, { "model_speedup_at_90", k.modelSpeedupAt90 } };
        if (!k.folder.isEmpty())
            o["folder"] = k.folder.toStdString();
        if (!k.contract.isEmpty())
            o["contract"] = k.contract.toJson();
        Json concrete = Json::array();
        for (const QVariant &v : c.concreteInputs) {
            if (v.typeId() == QMetaType::Bool)
                concrete.push_back(v.toBool());
            else if (v.typeId() == QMetaType::Double)
                concrete.push_back(v.toDouble());
            else if (v.typeId() == QMetaType::QString)
                concrete.push_back(v.toString().toStdString());
            else
                concrete.push_back(nullptr);
        }
        o["concrete_inputs"] = concrete;
        o["functions"] = strings(c.functions);
        o["call_sites"] = c.callSites;
        if (!c.covers.empty())
            o["covers"] = c.covers;
        kernelsJson.push_back(o);
    }
    Json projection = Json::array();
    for (int k : { 1, 3, 5, 10 }) {
        if (k <= kernels.size() || k == 1)
            projection.push_back({ { "top_k", k }, { "speedup", projected(k) } });
    }
    return Json { { "format", "autokernel-profile" }, { "version", 1 }, { "model", model.toStdString() },
        { "model_path", modelPath.toStdString() }, { "activity", activity.toStdString() },
        { "dtype", dtype.toStdString() }, { "torch", torchVersion.toStdString() },
        { "python", python.toStdString() }, { "warmup", warmup }, { "iterations", iterations },
        { "total_time_us", totalUs }, { "wall_time_ms", wallMs }, { "roof_fraction", fraction },
        { "device", device.toJson() }, { "projection", projection }, { "kernels", kernelsJson } };
}

} // namespace ak
