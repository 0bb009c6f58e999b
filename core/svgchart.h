#pragma once

#include <QString>
#include <QVector>

namespace ak {

// A small chart written as inline SVG, for the HTML report (core/runreport): the report must open in
// any browser from one file, made by a headless CLI that links no GUI library, so Qt Charts (widgets)
// cannot draw it. Points carry a CSS class (their outcome) and a title (the browser's tooltip).
class SvgChart
{
public:
    struct Point
    {
        double x = 0;
        double y = 0;
        QString cssClass; // "kept", "reverted", "failed", ...
        QString title; // tooltip
    };

    SvgChart(int width, int height);

    void setTitle(const QString &title) { m_title = title; }
    void setAxisTitles(const QString &x, const QString &y)
    {
        m_xTitle = x;
        m_yTitle = y;
    }
    // A line through `line` (the best so far, say) under the points.
    void setLine(const QVector<Point> &line) { m_line = line; }
    void setPoints(const QVector<Point> &points) { m_points = points; }
    // A dashed horizontal reference (the PyTorch baseline at 1.0×), labelled.
    void setReference(double y, const QString &label)
    {
        m_refY = y;
        m_refLabel = label;
        m_hasRef = true;
    }

    QString toSvg() const;

    // Horizontal bars, one per label, positive to the right of zero and negative to the left.
    static QString bars(const QVector<QPair<QString, double>> &values, const QString &unit, int width);

    // Up to ~6 round tick values covering [lo, hi]; integers only when `integers`.
    static QVector<double> ticks(double lo, double hi, bool integers);

private:
    int m_width;
    int m_height;
    QString m_title;
    QString m_xTitle;
    QString m_yTitle;
    QVector<Point> m_line;
    QVector<Point> m_points;
    bool m_hasRef = false;
    double m_refY = 0;
    QString m_refLabel;
};

} // namespace ak
