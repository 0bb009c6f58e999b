#include "agents/contextprompt.h"

#include <QStringList>

namespace ak {
namespace {

QString num(double v, int digits = 4)
{
    return Metrics::has(v) ? QString::number(v, 'g', digits) : QStringLiteral("-");
}

QString oneLine(QString s, int max)
{
    s = s.simplified();
    return s.size() > max ? s.left(max) + QStringLiteral("...") : s;
}

} // namespace

QString ContextPrompt::render(const AgentContext &c, int maxHistory)
{
    QStringList out;
    out << QStringLiteral("# Kernel %1 (%2)")
               .arg(c.kernelName.isEmpty() ? c.record.folder : c.kernelName,
                   c.opType.isEmpty() ? QStringLiteral("unknown type") : c.opType);
    if (!c.record.shapes.isEmpty())
        out << QStringLiteral("Model shapes: %1; dtype %2.")
                   .arg(c.record.shapes.join(QStringLiteral(", ")), c.record.dtype);
    const Metrics &b = c.best;
    out << QStringLiteral(
        "Current best: latency %1 us, speedup %2x over PyTorch, %3% of the %4 roof, noise %5%.")
               .arg(num(b.latencyUs), num(b.speedup), num(b.pctPeak, 3),
                   b.bound.isEmpty() ? QStringLiteral("device") : b.bound, num(b.noisePct, 2));

    QVector<const Experiment *> mine;
    for (const Experiment &e : c.history) {
        if (c.kernelName.isEmpty() || e.kernel.isEmpty() || e.kernel == c.kernelName)
            mine.append(&e);
    }
    out << QString();
    if (mine.isEmpty()) {
        out << QStringLiteral("No experiments on this kernel yet.");
    } else {
        const int first = std::max(0, int(mine.size()) - maxHistory);
        out << QStringLiteral("## Experiments so far (%1, the last %2 shown; failures say why)")
                   .arg(mine.size())
                   .arg(mine.size() - first);
        out << QStringLiteral("| # | result | speedup | latency us | description | failure |");
        out << QStringLiteral("|---|---|---|---|---|---|");
        for (int i = first; i < mine.size(); ++i) {
            const Experiment &e = *mine.at(i);
            out << QStringLiteral("| %1 | %2 | %3 | %4 | %5 | %6 |")
                       .arg(e.id)
                       .arg(statusName(e.status), num(e.metrics.speedup), num(e.metrics.latencyUs),
                           oneLine(e.description, 120), oneLine(e.failure, 160));
        }
    }
    out << QString() << QStringLiteral("## Current kernel.py") << QStringLiteral("```python");
    QString code = c.kernelPy;
    if (code.endsWith(QLatin1Char('\n')))
        code.chop(1);
    out << code << QStringLiteral("```") << QString();
    out << QStringLiteral("Propose the next experiment: reply with a DESCRIPTION line and the complete new "
                          "kernel.py in one ```python block.");
    return out.join(QLatin1Char('\n'));
}

} // namespace ak
