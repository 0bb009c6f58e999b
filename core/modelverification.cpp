#include "modelverification.h"

#include "jsonfield.h"

#include <nlohmann/json.hpp>

using nlohmann::json;

namespace ak {

namespace {

// Reads fields of one JSON object; a field of the wrong type is reported (naming the file and the
// field's path) and read as absent, so one odd field never hides the rest of a verification.
class FieldReader
{
public:
    FieldReader(const json &object, QString path, const QString &fileName, QStringList *warnings)
        : m_o(object)
        , m_path(std::move(path))
        , m_file(fileName)
        , m_warnings(warnings)
    { }

    QString field(const char *key) const
    {
        const QString name = QString::fromUtf8(key);
        return m_path.isEmpty() ? name : m_path + QLatin1Char('.') + name;
    }
    void warn(const char *key, const QString &problem) const
    {
        m_warnings->append(QStringLiteral("%1: \"%2\" %3").arg(m_file, field(key), problem));
    }
    // A field that is there but of another type is reported; a missing one only when required.
    template<typename T>
    T reported(T value, const jsonfield::Problem &p, bool required) const
    {
        if (p.wrongType() || (p.missing() && required))
            warn(p.key.c_str(), p.phrase());
        return value;
    }

    QString text(const char *key) const
    {
        jsonfield::Problem p;
        return reported(jsonfield::strict::text(m_o, key, &p).value_or(QString()), p, false);
    }
    double number(const char *key, bool required = false) const
    {
        jsonfield::Problem p;
        return reported(jsonfield::strict::number(m_o, key, &p).value_or(std::nan("")), p, required);
    }
    bool boolean(const char *key) const
    {
        jsonfield::Problem p;
        return reported(jsonfield::strict::boolean(m_o, key, &p).value_or(false), p, false);
    }
    const json *object(const char *key, bool required = false) const
    {
        jsonfield::Problem p;
        return reported(jsonfield::strict::object(m_o, key, &p), p, required);
    }
    const json *array(const char *key, bool required = false) const
    {
        jsonfield::Problem p;
        return reported(jsonfield::strict::array(m_o, key, &p), p, required);
    }
    QStringList strings(const char *key) const
    {
        QStringList out;
        if (const json *a = array(key)) {
            for (const json &s : *a) {
                if (!s.is_string()) {
                    warn(key, QStringLiteral("holds an entry that is not a string"));
                    continue;
                }
                out << QString::fromStdString(s.get<std::string>());
            }
        }
        return out;
    }
    FieldReader child(const json &o, const QString &name) const
    {
        return FieldReader(o, field(name.toUtf8().constData()), m_file, m_warnings);
    }

private:
    const json &m_o;
    QString m_path;
    QString m_file;
    QStringList *m_warnings;
};

ModelTiming timingFrom(const FieldReader &timings, const char *key, bool required)
{
    ModelTiming t;
    const std::string errorKey = std::string(key) + "_error";
    t.error = timings.text(errorKey.c_str());
    const json *o = timings.object(key, required);
    if (!o)
        return t;
    const FieldReader r = timings.child(*o, QString::fromUtf8(key));
    t.medianUs = r.number("median_us", true);
    t.speedupVsEager = r.number("speedup_vs_eager");
    t.speedupVsCompile = r.number("speedup_vs_compile");
    t.measured = !std::isnan(t.medianUs);
    return t;
}

// versus.<mode>.saved_us; NaN where that mode was not measured (null).
double savedUs(const json &versus, const FieldReader &r, const char *mode)
{
    const auto it = versus.find(mode);
    if (it == versus.end() || !it->is_object())
        return std::nan("");
    return r.child(*it, QString::fromUtf8(mode)).number("saved_us");
}

KernelVerification kernelFrom(const FieldReader &r)
{
    KernelVerification k;
    k.kernel = r.text("kernel");
    k.opType = r.text("op_type");
    k.sites = r.strings("sites");
    k.plugged = r.boolean("plugged");
    k.inFinalSet = r.boolean("in_final_set");
    k.reused = r.boolean("reused");
    k.whyNot = r.text("why_not");
    k.effectPct = r.number("effect_pct");
    if (const json *versus = r.object("versus")) {
        const FieldReader vr = r.child(*versus, QStringLiteral("versus"));
        k.savedEagerUs = savedUs(*versus, vr, "eager");
        k.savedCompileUs = savedUs(*versus, vr, "compile");
        k.compileWins = vr.boolean("compile_wins");
    }
    if (const json *re = r.object("recheck")) {
        const FieldReader rr = r.child(*re, QStringLiteral("recheck"));
        const double pairs = rr.number("pairs");
        k.recheck.pairs = std::isfinite(pairs) ? int(pairs) : 0;
        k.recheck.p10 = rr.number("p10");
        k.recheck.median = rr.number("median");
        k.recheck.p90 = rr.number("p90");
        k.recheck.offered = rr.boolean("offered");
    }
    if (const json *p = r.object("parity")) {
        const FieldReader parity = r.child(*p, QStringLiteral("parity"));
        k.parityChecked = true;
        k.parityOk = parity.boolean("ok");
        k.parityError = parity.number("error");
        k.eagerError = parity.number("eager_error");
        k.worstOutput = parity.text("worst_output");
    }
    return k;
}

} // namespace

const KernelVerification *ModelVerification::kernel(const QString &name) const
{
    for (const KernelVerification &k : kernels)
        if (k.kernel == name)
            return &k;
    return nullptr;
}

std::optional<ModelVerification> ModelVerification::parse(
    const QByteArray &data, const QString &fileName, QStringList *warnings)
{
    QStringList local;
    QStringList *out = warnings ? warnings : &local;
    const json o = json::parse(data.constData(), data.constData() + data.size(), nullptr, false);
    if (!o.is_object()) {
        out->append(
            QStringLiteral("%1: not a JSON object; the model view shows no verification").arg(fileName));
        return std::nullopt;
    }
    const FieldReader r(o, QString(), fileName, out);
    const QString format = r.text("format");
    if (format != QLatin1String("autokernel-verification")) {
        r.warn("format",
            QStringLiteral("is \"%1\", not \"autokernel-verification\"; the model view shows no verification")
                .arg(format));
        return std::nullopt;
    }
    const int before = int(out->size());
    const json *timings = r.object("timings", true);
    const json *kernels = r.array("kernels", true);
    ModelVerification v;
    if (timings) {
        const FieldReader t = r.child(*timings, QStringLiteral("timings"));
        // eager and eager+ours exist in every verification; the compile pair only where torch.compile ran.
        v.eager = timingFrom(t, "eager", true);
        v.eagerOurs = timingFrom(t, "eager+ours", true);
        v.compile = timingFrom(t, "compile", false);
        v.compileOurs = timingFrom(t, "compile+ours", false);
        v.compileAdvice = t.text("compile_advice");
    }
    if (!timings || !kernels || !v.eager.measured || !v.eagerOurs.measured) {
        out->insert(before,
            QStringLiteral("%1: unusable, the model view shows no verification (verify again):")
                .arg(fileName));
        return std::nullopt;
    }
    for (const json &k : *kernels) {
        const int index = int(&k - &(*kernels)[0]);
        if (!k.is_object()) {
            out->append(QStringLiteral("%1: \"kernels[%2]\" is not an object").arg(fileName).arg(index));
            continue;
        }
        KernelVerification entry = kernelFrom(r.child(k, QStringLiteral("kernels[%1]").arg(index)));
        if (entry.kernel.isEmpty()) {
            out->append(QStringLiteral("%1: \"kernels[%2].kernel\" is missing").arg(fileName).arg(index));
            continue;
        }
        v.kernels.append(entry);
    }
    v.when = QDateTime::fromString(r.text("when"), Qt::ISODate);
    v.mode = r.text("mode");
    if (v.mode.isEmpty())
        v.mode = QStringLiteral("eager");
    v.device = r.text("device");
    v.deviceName = r.text("device_name");
    v.dtype = r.text("dtype");
    v.torch = r.text("torch");
    v.triton = r.text("triton");
    v.python = r.text("python");
    if (const json *seeds = r.array("seeds")) {
        for (const json &s : *seeds) {
            if (s.is_number_integer())
                v.seeds.append(s.get<qint64>());
            else
                r.warn("seeds", QStringLiteral("holds an entry that is not a whole number"));
        }
    }
    v.finalSet = r.strings("final_set");
    if (const json *p = r.object("parity", true)) {
        const FieldReader parity = r.child(*p, QStringLiteral("parity"));
        v.parityOk = parity.boolean("ok");
        v.parityError = parity.number("error");
        v.eagerError = parity.number("eager_error");
        v.parityNote = parity.text("note");
    }
    if (const json *c = r.object("compile_seconds")) {
        const FieldReader cs = r.child(*c, QStringLiteral("compile_seconds"));
        v.compileSeconds = cs.number("compile");
        v.compileOursSeconds = cs.number("compile+ours");
    }
    v.modelSpeedup = r.number("model_speedup");
    if (std::isnan(v.modelSpeedup))
        v.modelSpeedup = v.eagerOurs.speedupVsEager;
    v.seconds = r.number("seconds");
    return v;
}

} // namespace ak
