#include "resultstsv.h"

#include <QHash>

namespace ak {

namespace {
QByteArray number(double v, int decimals)
{
    return Metrics::has(v) ? QByteArray::number(v, 'f', decimals) : QByteArray();
}

// Tabs and newlines inside a description would break the columns.
QByteArray cell(const QString &s)
{
    QString t = s;
    t.replace(QLatin1Char('\t'), QLatin1Char(' '))
        .replace(QLatin1Char('\n'), QLatin1Char(' '))
        .replace(QLatin1Char('\r'), QLatin1Char(' '));
    return t.toUtf8();
}
} // namespace

QByteArray ResultsTsv::header()
{
    return "experiment\ttag\tkernel_type\tthroughput_tflops\tlatency_us\tpct_peak\tspeedup_vs_pytorch\t"
           "correctness\tpeak_vram_mb\tdescription\n";
}

QByteArray ResultsTsv::row(const Experiment &e, const QString &kernelType)
{
    const Metrics &m = e.metrics;
    QByteArray r;
    r += QByteArray::number(e.id) + '\t' + cell(e.kernel) + '\t' + cell(kernelType) + '\t'
        + number(m.tflops, 3) + '\t' + number(m.latencyUs, 3) + '\t' + number(m.pctPeak, 2) + '\t'
        + number(m.speedup, 4) + '\t' + (m.correct ? "PASS" : "FAIL") + '\t' + number(m.peakVramMb, 1) + '\t'
        + cell(e.description) + '\n';
    return r;
}

QByteArray ResultsTsv::render(const QVector<Experiment> &experiments, const QVector<KernelRecord> &kernels)
{
    QHash<QString, QString> types;
    for (const KernelRecord &k : kernels)
        types.insert(k.folder.section(QLatin1Char('/'), -1), k.opType);
    QByteArray out = header();
    for (const Experiment &e : experiments)
        if (isExported(e))
            out += row(e, types.value(e.kernel));
    return out;
}

} // namespace ak
