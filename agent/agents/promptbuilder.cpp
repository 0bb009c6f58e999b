#include "agents/promptbuilder.h"

#include "keeprule.h"

#include <QFile>
#include <QRegularExpression>
#include <QSet>

namespace ak {

namespace {

// Anything between double braces is a placeholder, so a misspelt one is reported rather than sent.
const QRegularExpression &placeholderPattern()
{
    static const QRegularExpression re(QStringLiteral(R"(\{\{([^{}\n]*)\}\})"));
    return re;
}

QString number(double v, int digits = 4)
{
    return v > 0 ? QString::number(v, 'g', digits) : QStringLiteral("unknown");
}

} // namespace

PromptBuilder::PromptBuilder()
{
    QFile f(QStringLiteral(":/autokernel/program.md"));
    if (f.open(QIODevice::ReadOnly))
        m_playbook = QString::fromUtf8(f.readAll());
    else
        m_loadError = QStringLiteral(":/autokernel/program.md: %1").arg(f.errorString());
}

PromptBuilder::PromptBuilder(const QString &playbook)
    : m_playbook(playbook)
{ }

QString PromptBuilder::architectureFamily(const DeviceInfo &d)
{
    const QString cc = d.computeCapability.trimmed().toLower();
    if (d.vendor == QLatin1String("cpu"))
        return QStringLiteral("cpu");
    if (d.vendor == QLatin1String("amd")) {
        if (cc.startsWith(QLatin1String("gfx94")))
            return QStringLiteral("cdna3");
        if (cc.startsWith(QLatin1String("gfx95")))
            return QStringLiteral("cdna4");
        if (cc == QLatin1String("gfx90a") || cc == QLatin1String("gfx908"))
            return QStringLiteral("cdna2");
        if (cc.startsWith(QLatin1String("gfx11")) || cc.startsWith(QLatin1String("gfx12")))
            return QStringLiteral("rdna");
        return QStringLiteral("amd");
    }
    if (d.vendor == QLatin1String("nvidia")) {
        const int major = cc.section(QLatin1Char('.'), 0, 0).toInt();
        const int minor = cc.section(QLatin1Char('.'), 1, 1).toInt();
        if (major >= 10)
            return QStringLiteral("blackwell");
        if (major == 9)
            return QStringLiteral("hopper");
        if (major == 8)
            return minor == 9 ? QStringLiteral("ada") : QStringLiteral("ampere");
        if (major == 7)
            return minor >= 5 ? QStringLiteral("turing") : QStringLiteral("volta");
        return QStringLiteral("nvidia");
    }
    return QStringLiteral("unknown");
}

QMap<QString, QString> PromptBuilder::values(const DeviceInfo &d, const KernelRecord &k, const MoveOnRules &r)
{
    QMap<QString, QString> v;
    const bool amd = d.vendor == QLatin1String("amd");
    v[QStringLiteral("device.name")] = d.name.isEmpty() ? QStringLiteral("unknown device") : d.name;
    v[QStringLiteral("device.vendor")] = d.vendor.isEmpty() ? QStringLiteral("unknown") : d.vendor;
    v[QStringLiteral("device.arch")]
        = d.computeCapability.isEmpty() ? QStringLiteral("n/a") : d.computeCapability;
    v[QStringLiteral("device.family")] = architectureFamily(d);
    v[QStringLiteral("device.units")] = d.smCount > 0
        ? QStringLiteral("%1 %2").arg(d.smCount).arg(amd ? QStringLiteral("CUs") : QStringLiteral("SMs"))
        : QStringLiteral("unknown");
    v[QStringLiteral("device.bandwidth_gbs")] = number(d.bandwidthGBs);
    v[QStringLiteral("device.l2_mib")] = number(d.l2MiB);
    v[QStringLiteral("device.memory_gib")] = number(d.memoryGiB);
    v[QStringLiteral("device.peak_fp32_tflops")] = number(d.peak(Precision::FP32));
    v[QStringLiteral("device.peak_tf32_tflops")] = number(d.peak(Precision::TF32));
    v[QStringLiteral("device.peak_fp16_tflops")] = number(d.peak(Precision::FP16));
    v[QStringLiteral("device.peak_bf16_tflops")] = number(d.peak(Precision::BF16));
    v[QStringLiteral("device.peak_fp8_tflops")] = number(d.peak(Precision::FP8));
    // Ridge point: the arithmetic intensity (FLOP/byte) above which the compute roof binds.
    const auto ridge = [&d](Precision p) {
        return d.bandwidthGBs > 0 && d.peak(p) > 0 ? number(d.peak(p) * 1e12 / (d.bandwidthGBs * 1e9), 3)
                                                   : QStringLiteral("unknown");
    };
    v[QStringLiteral("device.ridge_bf16")] = ridge(Precision::BF16);
    v[QStringLiteral("device.ridge_fp32")] = ridge(Precision::FP32);
    v[QStringLiteral("device.source")] = d.estimated
        ? QStringLiteral("estimated from unit count and clocks")
        : (d.note.isEmpty() ? QStringLiteral("GPU database") : d.note);
    v[QStringLiteral("kernel.type")] = k.opType.isEmpty() ? QStringLiteral("unknown") : k.opType;
    v[QStringLiteral("kernel.name")] = k.name.isEmpty() ? k.folder : k.name;
    v[QStringLiteral("kernel.dtype")] = k.dtype.isEmpty() ? QStringLiteral("unknown") : k.dtype;
    v[QStringLiteral("kernel.shapes")]
        = k.shapes.isEmpty() ? QStringLiteral("unknown") : k.shapes.join(QStringLiteral(", "));
    if (k.contract.isEmpty()) {
        v[QStringLiteral("kernel.contract")] = QStringLiteral("the harness's default contract for this type");
    } else {
        const QString attrs = k.contract.attributesText();
        v[QStringLiteral("kernel.contract")]
            = QStringLiteral("`%1`%2").arg(k.contract.callable.isEmpty() ? k.opType : k.contract.callable,
                attrs.isEmpty() ? QString() : QStringLiteral(" with %1").arg(attrs));
    }
    v[QStringLiteral("rules.max_consecutive_reverts")] = QString::number(r.maxConsecutiveReverts);
    v[QStringLiteral("rules.roof_pct")] = QString::number(r.roofPct, 'g', 4);
    v[QStringLiteral("rules.hours_per_kernel")] = QString::number(r.hoursPerKernel, 'g', 4);
    v[QStringLiteral("rules.speedup_over_baseline")] = QString::number(r.speedupOverBaseline, 'g', 4);
    v[QStringLiteral("rules.max_in_model_misses")] = QString::number(r.maxInModelMisses);
    v[QStringLiteral("rules.keep_min_improvement_pct")] = QString::number(kKeepMinImprovementPct, 'g', 4);
    return v;
}

QStringList PromptBuilder::placeholders() const
{
    QStringList names;
    QSet<QString> seen;
    auto it = placeholderPattern().globalMatch(m_playbook);
    while (it.hasNext()) {
        const QString name = it.next().captured(1).trimmed();
        if (!seen.contains(name)) {
            seen.insert(name);
            names << name;
        }
    }
    return names;
}

QString PromptBuilder::systemPrompt(
    const DeviceInfo &device, const KernelRecord &kernel, const MoveOnRules &rules, QString *error) const
{
    if (m_playbook.isEmpty()) {
        if (error)
            *error = m_loadError.isEmpty() ? QStringLiteral("program.md is empty") : m_loadError;
        return QString();
    }
    const QMap<QString, QString> v = values(device, kernel, rules);
    QString out;
    QStringList unknown;
    qsizetype last = 0;
    auto it = placeholderPattern().globalMatch(m_playbook);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        out += QStringView(m_playbook).mid(last, m.capturedStart() - last);
        last = m.capturedEnd();
        const QString name = m.captured(1).trimmed();
        const auto found = v.constFind(name);
        if (found != v.constEnd()) {
            out += *found;
        } else {
            const int line
                = int(QStringView(m_playbook).left(m.capturedStart()).count(QLatin1Char('\n'))) + 1;
            unknown << QStringLiteral("program.md:%1: unknown placeholder {{%2}}").arg(line).arg(name);
        }
    }
    out += QStringView(m_playbook).mid(last);
    if (!unknown.isEmpty()) {
        if (error)
            *error = unknown.join(QStringLiteral("; "));
        return QString();
    }
    if (error)
        error->clear();
    return out;
}

QString PromptBuilder::compact(const QString &prompt, const QString &opType, bool cpu)
{
    // Sections by number, so a reworded heading keeps its place (tests check what stays).
    static const QRegularExpression section(QStringLiteral("(?m)^(?=## )"));
    static const QRegularExpression number(QStringLiteral("^## (\\d+)\\."));
    static const QRegularExpression recipe(QStringLiteral("(?m)^(?=### )"));
    const QSet<int> always { 0, 1, 2, 10 };
    QString out;
    for (const QString &part : prompt.split(section)) {
        const QRegularExpressionMatch m = number.match(part);
        if (!m.hasMatch()) {
            out += part; // the title and what precedes the first section
            continue;
        }
        const int n = m.captured(1).toInt();
        if (always.contains(n) || (n == 3 && !cpu) || (n == 9 && cpu)) {
            out += part;
        } else if (n == 8) {
            // The op type recipes: the section's introduction and this kernel's recipe only.
            const QStringList recipes = part.split(recipe);
            out += recipes.value(0);
            const QString heading = QStringLiteral("### `%1`").arg(opType);
            for (const QString &r : recipes)
                if (r.startsWith(heading))
                    out += r;
        }
    }
    return out;
}

} // namespace ak
