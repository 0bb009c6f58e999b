#include "svgchart.h"

#include <QPair>

#include <algorithm>
#include <cmath>

namespace ak {

namespace {

QString num(double v)
{
    return QString::number(v, 'f', 1);
}

QString tickText(double v)
{
    return QString::number(v, 'g', 4);
}

} // namespace

SvgChart::SvgChart(int width, int height)
    : m_width(width)
    , m_height(height)
{ }

QVector<double> SvgChart::ticks(double lo, double hi, bool integers)
{
    if (!(hi > lo))
        hi = lo + 1;
    double step = std::pow(10.0, std::floor(std::log10((hi - lo) / 5)));
    for (double m : { 1.0, 2.0, 5.0, 10.0 }) {
        if ((hi - lo) / (step * m) <= 6) {
            step *= m;
            break;
        }
    }
    if (integers)
        step = std::max(1.0, std::round(step));
    QVector<double> out;
    for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step)
        out << (std::abs(v) < step * 1e-9 ? 0.0 : v);
    return out;
}

QString SvgChart::toSvg() const
{
    const double left = 56, right = 12, top = m_title.isEmpty() ? 10 : 28, bottom = 40;
    const double plotW = m_width - left - right, plotH = m_height - top - bottom;
    double xLo = 0, xHi = 1, yLo = 0, yHi = 1;
    bool any = false;
    const auto take = [&](const Point &p) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y))
            return;
        xLo = any ? std::min(xLo, p.x) : p.x;
        xHi = any ? std::max(xHi, p.x) : p.x;
        yLo = any ? std::min(yLo, p.y) : p.y;
        yHi = any ? std::max(yHi, p.y) : p.y;
        any = true;
    };
    for (const Point &p : m_points)
        take(p);
    for (const Point &p : m_line)
        take(p);
    if (m_hasRef) {
        yLo = any ? std::min(yLo, m_refY) : m_refY;
        yHi = any ? std::max(yHi, m_refY) : m_refY;
    }
    // The range of the data with a margin, not from zero: a 3% change must be visible.
    const double pad = std::max((yHi - yLo) * 0.08, std::abs(yHi) * 0.01 + 1e-9);
    yLo -= pad;
    yHi += pad;
    if (xHi <= xLo)
        xHi = xLo + 1;
    const auto sx = [&](double x) { return left + (x - xLo) / (xHi - xLo) * plotW; };
    const auto sy = [&](double y) { return top + (1 - (y - yLo) / (yHi - yLo)) * plotH; };

    QString s;
    s += QStringLiteral(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%1\" height=\"%2\" "
        "viewBox=\"0 0 %1 %2\" role=\"img\">")
             .arg(m_width)
             .arg(m_height);
    if (!m_title.isEmpty())
        s += QStringLiteral("<text class=\"title\" x=\"%1\" y=\"18\">%2</text>")
                 .arg(num(left), m_title.toHtmlEscaped());
    s += QStringLiteral("<rect class=\"plot\" x=\"%1\" y=\"%2\" width=\"%3\" height=\"%4\"/>")
             .arg(num(left), num(top), num(plotW), num(plotH));
    for (double t : ticks(yLo, yHi, false)) {
        s += QStringLiteral("<line class=\"grid\" x1=\"%1\" x2=\"%2\" y1=\"%3\" y2=\"%3\"/>"
                            "<text class=\"tick\" x=\"%4\" y=\"%5\" text-anchor=\"end\">%6</text>")
                 .arg(num(left), num(left + plotW), num(sy(t)), num(left - 4), num(sy(t) + 4), tickText(t));
    }
    for (double t : ticks(xLo, xHi, true)) {
        s += QStringLiteral("<text class=\"tick\" x=\"%1\" y=\"%2\" text-anchor=\"middle\">%3</text>")
                 .arg(num(sx(t)), num(top + plotH + 14), tickText(t));
    }
    if (!m_xTitle.isEmpty())
        s += QStringLiteral("<text class=\"axis\" x=\"%1\" y=\"%2\" text-anchor=\"middle\">%3</text>")
                 .arg(num(left + plotW / 2), num(m_height - 6.0), m_xTitle.toHtmlEscaped());
    if (!m_yTitle.isEmpty())
        s += QStringLiteral("<text class=\"axis\" x=\"12\" y=\"%1\" transform=\"rotate(-90 12 %1)\" "
                            "text-anchor=\"middle\">%2</text>")
                 .arg(num(top + plotH / 2), m_yTitle.toHtmlEscaped());
    if (m_hasRef)
        s += QStringLiteral("<line class=\"ref\" x1=\"%1\" x2=\"%2\" y1=\"%3\" y2=\"%3\"/>"
                            "<text class=\"reflabel\" x=\"%4\" y=\"%5\" text-anchor=\"end\">%6</text>")
                 .arg(num(left), num(left + plotW), num(sy(m_refY)), num(left + plotW - 4),
                     num(sy(m_refY) - 4), m_refLabel.toHtmlEscaped());
    if (m_line.size() > 1) {
        QString d;
        for (const Point &p : m_line)
            if (std::isfinite(p.x) && std::isfinite(p.y))
                d += QStringLiteral("%1%2,%3").arg(
                    d.isEmpty() ? QStringLiteral("M") : QStringLiteral(" L"), num(sx(p.x)), num(sy(p.y)));
        s += QStringLiteral("<path class=\"best\" d=\"%1\"/>").arg(d);
    }
    for (const Point &p : m_points) {
        if (!std::isfinite(p.x) || !std::isfinite(p.y))
            continue;
        s += QStringLiteral(
            "<circle class=\"pt %1\" cx=\"%2\" cy=\"%3\" r=\"3.5\"><title>%4</title></circle>")
                 .arg(p.cssClass.toHtmlEscaped(), num(sx(p.x)), num(sy(p.y)), p.title.toHtmlEscaped());
    }
    s += QStringLiteral("</svg>");
    return s;
}

QString SvgChart::bars(const QVector<QPair<QString, double>> &values, const QString &unit, int width)
{
    const double labelW = 170, rowH = 22, valueW = 70;
    const double plotW = width - labelW - valueW;
    double extent = 1e-9;
    for (const auto &v : values)
        if (std::isfinite(v.second))
            extent = std::max(extent, std::abs(v.second));
    bool anyNegative = false;
    for (const auto &v : values)
        anyNegative = anyNegative || v.second < 0;
    const double zero = labelW + (anyNegative ? plotW / 2 : 0);
    const double scale = (anyNegative ? plotW / 2 : plotW) / extent;
    const int height = int(rowH * values.size() + 8);
    QString s = QStringLiteral(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%1\" height=\"%2\" "
        "viewBox=\"0 0 %1 %2\" role=\"img\">")
                    .arg(width)
                    .arg(height);
    for (int i = 0; i < values.size(); ++i) {
        const double y = 4 + i * rowH, v = values[i].second;
        s += QStringLiteral("<text class=\"tick\" x=\"%1\" y=\"%2\" text-anchor=\"end\">%3</text>")
                 .arg(num(labelW - 6), num(y + 15), values[i].first.toHtmlEscaped());
        if (std::isfinite(v)) {
            const double w = std::abs(v) * scale;
            s += QStringLiteral("<rect class=\"bar %1\" x=\"%2\" y=\"%3\" width=\"%4\" height=\"%5\">"
                                "<title>%6 %7</title></rect>")
                     .arg(v >= 0 ? QStringLiteral("gain") : QStringLiteral("loss"),
                         num(v >= 0 ? zero : zero - w), num(y + 3), num(std::max(w, 1.0)), num(rowH - 6),
                         values[i].first.toHtmlEscaped(), QString::number(v, 'f', 2) + unit);
            s += QStringLiteral("<text class=\"tick\" x=\"%1\" y=\"%2\">%3</text>")
                     .arg(num(labelW + plotW + 6), num(y + 15),
                         (v > 0 ? QStringLiteral("+") : QString()) + QString::number(v, 'f', 2) + unit);
        } else {
            s += QStringLiteral("<text class=\"tick\" x=\"%1\" y=\"%2\">not measured</text>")
                     .arg(num(zero + 4), num(y + 15));
        }
    }
    s += QStringLiteral("<line class=\"ref\" x1=\"%1\" x2=\"%1\" y1=\"0\" y2=\"%2\"/>")
             .arg(num(zero))
             .arg(height);
    s += QStringLiteral("</svg>");
    return s;
}

} // namespace ak
