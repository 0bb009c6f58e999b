#include "experimentlog.h"

#include "atomicfile.h"
#include "jsonfield.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QFileInfo>

#include <stdexcept>

using nlohmann::json;

namespace ak {

namespace {

// A bad field becomes one error naming the field; the line is skipped, the file still loads.
struct FieldError : std::runtime_error
{
    using std::runtime_error::runtime_error;
};

// A value of another type is an error (the line is skipped); a missing or null one is not.
void check(const jsonfield::Problem &p, const char *mustBe)
{
    if (p.wrongType())
        throw FieldError("field \"" + p.key + "\" must be " + mustBe);
}

QString str(const json &o, const char *key, bool required = false)
{
    jsonfield::Problem p;
    const std::optional<QString> s = jsonfield::strict::text(o, key, &p);
    check(p, "a string");
    if (!s && required)
        throw FieldError(std::string("missing field \"") + key + '"');
    return s.value_or(QString());
}

double num(const json &o, const char *key, double fallback)
{
    jsonfield::Problem p;
    const std::optional<double> v = jsonfield::strict::number(o, key, &p);
    check(p, "a number");
    return v.value_or(fallback);
}

QDateTime time(const json &o, const char *key)
{
    jsonfield::Problem p;
    const std::optional<QString> s = jsonfield::strict::text(o, key, &p);
    check(p, "an ISO 8601 time");
    if (!s)
        return QDateTime();
    const QDateTime t = ExperimentLog::parseTime(s->toStdString());
    if (!t.isValid())
        throw FieldError(std::string("field \"") + key + "\" is not an ISO 8601 time");
    return t;
}

void putNum(json &o, const char *key, double v)
{
    if (Metrics::has(v))
        o[key] = v;
}

Metrics metricsFrom(const json &o)
{
    Metrics m;
    if (!o.is_object())
        throw FieldError("field \"metrics\" must be an object");
    m.latencyUs = num(o, "latency_us", m.latencyUs);
    m.refLatencyUs = num(o, "ref_latency_us", m.refLatencyUs);
    m.speedup = num(o, "speedup", m.speedup);
    m.tflops = num(o, "tflops", m.tflops);
    m.gbps = num(o, "gbps", m.gbps);
    m.pctPeak = num(o, "pct_peak", m.pctPeak);
    m.noisePct = num(o, "noise_pct", m.noisePct);
    m.peakVramMb = num(o, "peak_vram_mb", m.peakVramMb);
    m.bound = str(o, "bound");
    m.sandbox = str(o, "sandbox");
    m.pctPeakSpec = num(o, "pct_peak_spec", m.pctPeakSpec);
    m.roof = str(o, "roof");
    m.compileLatencyUs = num(o, "compile_latency_us", m.compileLatencyUs);
    m.compileSpeedup = num(o, "compile_speedup", m.compileSpeedup);
    m.compileNote = str(o, "compile");
    m.judge = str(o, "judge");
    m.isolation = str(o, "isolation");
    m.precision = str(o, "precision");
    const auto c = o.find("correct");
    if (c != o.end() && !c->is_boolean())
        throw FieldError("field \"metrics.correct\" must be true or false");
    m.correct = c != o.end() && c->get<bool>();
    return m;
}

KernelRecord kernelRecordFrom(const json &o)
{
    if (!o.is_object())
        throw FieldError("field \"record\" must be an object");
    KernelRecord k;
    k.rank = int(num(o, "rank", 0));
    k.folder = str(o, "folder");
    k.name = str(o, "name");
    k.opType = str(o, "op_type");
    k.atenOp = str(o, "aten_op");
    k.shapes << jsonfield::texts(o, "shapes");
    k.dtype = str(o, "dtype");
    k.timeUs = num(o, "time_us", 0);
    k.share = num(o, "share", 0);
    k.calls = int(num(o, "calls", 0));
    k.flops = num(o, "flops", 0);
    k.bytes = num(o, "bytes", 0);
    k.floorUs = num(o, "floor_us", 0);
    k.maxSpeedup = num(o, "max_speedup", 0);
    k.modelSpeedupAt90 = num(o, "model_speedup_at_90", 0);
    if (const json *c = jsonfield::object(o, "contract"))
        k.contract = KernelContract::fromJson(*c);
    return k;
}

LogEntry entryFrom(const json &o)
{
    if (!o.is_object())
        throw FieldError("not a JSON object");
    LogEntry e;
    const QString type = str(o, "type", true);
    e.action = str(o, "action");
    e.time = time(o, "time");
    if (type == QLatin1String("experiment")) {
        e.type = LogEntry::Type::Experiment;
        Experiment &x = e.experiment;
        const double id = num(o, "id", 0);
        if (id < 1 || id != double(int(id)))
            throw FieldError("field \"id\" must be a positive integer");
        x.id = int(id);
        x.kernel = str(o, "kernel", true);
        x.commit = str(o, "commit");
        x.parent = str(o, "parent");
        x.agent = str(o, "agent");
        x.description = str(o, "description");
        const QString status = str(o, "status", true);
        if (!parseStatus(status, &x.status))
            throw FieldError("field \"status\": unknown status \"" + status.toStdString() + '"');
        x.failure = str(o, "failure");
        if (const auto m = o.find("metrics"); m != o.end() && !m->is_null())
            x.metrics = metricsFrom(*m);
        x.started = time(o, "started");
        x.finished = time(o, "finished");
        x.agentSeconds = num(o, "agent_seconds", 0);
        x.benchSeconds = num(o, "bench_seconds", 0);
        x.tokensIn = qint64(num(o, "tokens_in", 0));
        x.tokensOut = qint64(num(o, "tokens_out", 0));
        x.cost = num(o, "cost", 0);
        e.head = str(o, "head");
    } else if (type == QLatin1String("kernel")) {
        e.type = LogEntry::Type::Kernel;
        e.kernel = str(o, "kernel", true);
        e.reason = str(o, "reason");
        if (e.action == QLatin1String("add")) {
            const auto r = o.find("record");
            if (r == o.end())
                throw FieldError("missing field \"record\"");
            e.record = kernelRecordFrom(*r);
        }
    } else if (type == QLatin1String("run")) {
        e.type = LogEntry::Type::Run;
        if (e.action == QLatin1String("move_on")) {
            const json *v = jsonfield::object(o, "value");
            if (!v)
                throw FieldError("field \"value\" must be the move-on rules object");
            QString why;
            if (!MoveOnRules::fromJson(QByteArray::fromStdString(v->dump()), &e.moveOn, &why))
                throw FieldError("field \"value\": " + why.toStdString());
            e.by = str(o, "by");
            e.runJsonBefore = str(o, "run_json_before");
        } else {
            e.value = jsonfield::boolean(o, "value", false);
        }
    } else {
        throw FieldError("field \"type\": unknown type \"" + type.toStdString() + '"');
    }
    return e;
}

// Digits at text[pos, pos+n), or -1.
int digits(const std::string &text, size_t pos, size_t n)
{
    if (pos + n > text.size())
        return -1;
    int v = 0;
    for (size_t i = pos; i < pos + n; ++i) {
        if (text[i] < '0' || text[i] > '9')
            return -1;
        v = v * 10 + (text[i] - '0');
    }
    return v;
}

} // namespace

QString ExperimentLog::timeText(const QDateTime &t)
{
    return t.isValid() ? t.toUTC().toString(Qt::ISODateWithMs) : QString();
}

QDateTime ExperimentLog::parseTime(const std::string &text)
{
    // Fast path for what we write ("2024-05-01T12:34:56.789Z"): the loader meets 20,000 of these.
    if (text.size() == 24 && text[4] == '-' && text[7] == '-' && text[10] == 'T' && text[13] == ':'
        && text[16] == ':' && text[19] == '.' && text[23] == 'Z') {
        const QDate d(digits(text, 0, 4), digits(text, 5, 2), digits(text, 8, 2));
        const QTime t(digits(text, 11, 2), digits(text, 14, 2), digits(text, 17, 2), digits(text, 20, 3));
        if (d.isValid() && t.isValid())
            return QDateTime(d, t, Qt::UTC);
    }
    return QDateTime::fromString(QString::fromStdString(text), Qt::ISODateWithMs);
}

json ExperimentLog::metricsToJson(const Metrics &m)
{
    json o = json::object();
    putNum(o, "latency_us", m.latencyUs);
    putNum(o, "ref_latency_us", m.refLatencyUs);
    putNum(o, "speedup", m.speedup);
    putNum(o, "tflops", m.tflops);
    putNum(o, "gbps", m.gbps);
    putNum(o, "pct_peak", m.pctPeak);
    putNum(o, "noise_pct", m.noisePct);
    putNum(o, "peak_vram_mb", m.peakVramMb);
    if (!m.sandbox.isEmpty())
        o["sandbox"] = m.sandbox.toStdString();
    putNum(o, "pct_peak_spec", m.pctPeakSpec);
    putNum(o, "compile_latency_us", m.compileLatencyUs);
    putNum(o, "compile_speedup", m.compileSpeedup);
    // Empty texts stay out: runs recorded before #43 read back the same.
    for (const auto &[key, text] : { std::pair { "roof", &m.roof }, { "compile", &m.compileNote },
             { "judge", &m.judge }, { "isolation", &m.isolation }, { "precision", &m.precision } })
        if (!text->isEmpty())
            o[key] = text->toStdString();
    if (!m.bound.isEmpty())
        o["bound"] = m.bound.toStdString();
    o["correct"] = m.correct;
    return o;
}

json ExperimentLog::experimentToJson(const Experiment &x)
{
    json o;
    o["id"] = x.id;
    o["kernel"] = x.kernel.toStdString();
    o["commit"] = x.commit.toStdString();
    o["parent"] = x.parent.toStdString();
    o["agent"] = x.agent.toStdString();
    o["description"] = x.description.toStdString();
    o["status"] = statusName(x.status).toStdString();
    if (!x.failure.isEmpty())
        o["failure"] = x.failure.toStdString();
    o["metrics"] = metricsToJson(x.metrics);
    if (x.started.isValid())
        o["started"] = timeText(x.started).toStdString();
    if (x.finished.isValid())
        o["finished"] = timeText(x.finished).toStdString();
    o["agent_seconds"] = x.agentSeconds;
    o["bench_seconds"] = x.benchSeconds;
    if (x.tokensIn > 0 || x.tokensOut > 0) {
        o["tokens_in"] = x.tokensIn;
        o["tokens_out"] = x.tokensOut;
    }
    if (x.cost > 0)
        o["cost"] = x.cost;
    return o;
}

json ExperimentLog::kernelRecordToJson(const KernelRecord &k)
{
    json shapes = json::array();
    for (const QString &s : k.shapes)
        shapes.push_back(s.toStdString());
    json o { { "rank", k.rank }, { "folder", k.folder.toStdString() }, { "name", k.name.toStdString() },
        { "op_type", k.opType.toStdString() }, { "aten_op", k.atenOp.toStdString() }, { "shapes", shapes },
        { "dtype", k.dtype.toStdString() }, { "time_us", k.timeUs }, { "share", k.share },
        { "calls", k.calls }, { "flops", k.flops }, { "bytes", k.bytes }, { "floor_us", k.floorUs },
        { "max_speedup", k.maxSpeedup }, { "model_speedup_at_90", k.modelSpeedupAt90 } };
    if (!k.contract.isEmpty())
        o["contract"] = k.contract.toJson();
    return o;
}

QByteArray ExperimentLog::encode(const LogEntry &e)
{
    json o;
    switch (e.type) {
    case LogEntry::Type::Experiment:
        o = experimentToJson(e.experiment);
        o["type"] = "experiment";
        if (!e.head.isEmpty())
            o["head"] = e.head.toStdString();
        break;
    case LogEntry::Type::Kernel:
        o["type"] = "kernel";
        o["kernel"] = e.kernel.toStdString();
        if (e.action == QLatin1String("add"))
            o["record"] = kernelRecordToJson(e.record);
        if (!e.reason.isEmpty())
            o["reason"] = e.reason.toStdString();
        break;
    case LogEntry::Type::Run:
        o["type"] = "run";
        if (e.action == QLatin1String("move_on")) {
            o["value"] = json::parse(e.moveOn.toJson().toStdString());
            if (!e.by.isEmpty())
                o["by"] = e.by.toStdString();
            if (!e.runJsonBefore.isEmpty())
                o["run_json_before"] = e.runJsonBefore.toStdString();
        } else {
            o["value"] = e.value;
        }
        break;
    }
    o["action"] = e.action.toStdString();
    o["time"] = timeText(e.time.isValid() ? e.time : QDateTime::currentDateTimeUtc()).toStdString();
    // Invalid UTF-8 from an agent's description must not make the whole record unwritable.
    QByteArray line = QByteArray::fromStdString(o.dump(-1, ' ', false, json::error_handler_t::replace));
    line += '\n';
    return line;
}

bool ExperimentLog::append(const QString &path, const LogEntry &entry, QString *error)
{
    return AtomicFile::append(path, encode(entry), error);
}

ExperimentLog::ReadResult ExperimentLog::read(const QString &path)
{
    QFile f(path);
    if (!f.exists())
        return ReadResult();
    if (!f.open(QIODevice::ReadOnly)) {
        ReadResult r;
        r.errors << QStringLiteral("%1: %2").arg(path, f.errorString());
        return r;
    }
    return parse(f.readAll(), QFileInfo(path).fileName());
}

ExperimentLog::ReadResult ExperimentLog::parse(
    const QByteArray &data, const QString &displayName, int firstLine)
{
    ReadResult r;
    const char *begin = data.constData();
    const char *end = begin + data.size();
    r.entries.reserve(int(data.size() / 400));
    int lineNo = firstLine - 1;
    for (const char *p = begin; p < end;) {
        const char *nl = static_cast<const char *>(memchr(p, '\n', size_t(end - p)));
        ++lineNo;
        if (!nl) {
            // No newline: a record still being appended by the writer, or torn by a kill.
            r.partialTail = true;
            break;
        }
        const char *q = nl;
        if (q > p && q[-1] == '\r')
            --q;
        if (q > p) {
            try {
                LogEntry e = entryFrom(json::parse(p, q));
                e.line = lineNo;
                r.entries.push_back(std::move(e));
            } catch (const json::parse_error &ex) {
                r.errors << QStringLiteral("%1:%2: invalid JSON (byte %3)")
                                .arg(displayName)
                                .arg(lineNo)
                                .arg(ex.byte);
            } catch (const std::exception &ex) {
                r.errors << QStringLiteral("%1:%2: %3")
                                .arg(displayName)
                                .arg(lineNo)
                                .arg(QString::fromUtf8(ex.what()));
            }
        }
        p = nl + 1;
        r.completeBytes = p - begin;
        r.completeLines = lineNo - firstLine + 1;
    }
    return r;
}

} // namespace ak
