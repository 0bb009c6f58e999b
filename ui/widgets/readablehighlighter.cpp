#include "widgets/readablehighlighter.h"

#include <KSyntaxHighlighting/Format>
#include <KSyntaxHighlighting/Theme>

#include <QTextCharFormat>

#include <algorithm>
#include <cmath>

namespace ak {

namespace {

double luminance(const QColor &c)
{
    auto linear = [](double v) { return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * linear(c.redF()) + 0.7152 * linear(c.greenF()) + 0.0722 * linear(c.blueF());
}

QColor mix(const QColor &a, const QColor &b, double t)
{
    return QColor::fromRgbF(float(a.redF() * (1 - t) + b.redF() * t),
        float(a.greenF() * (1 - t) + b.greenF() * t), float(a.blueF() * (1 - t) + b.blueF() * t));
}

double worstContrast(const QColor &colour, const QVector<QColor> &backgrounds)
{
    double worst = 21;
    for (const QColor &bg : backgrounds)
        worst = std::min(worst, ReadableHighlighter::contrast(colour, bg));
    return worst;
}

} // namespace

ReadableHighlighter::ReadableHighlighter(QTextDocument *document)
    : KSyntaxHighlighting::SyntaxHighlighter(document)
{ }

double ReadableHighlighter::contrast(const QColor &a, const QColor &b)
{
    const double la = luminance(a), lb = luminance(b);
    return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

QColor ReadableHighlighter::readable(const QColor &colour, const QVector<QColor> &backgrounds)
{
    if (backgrounds.isEmpty() || worstContrast(colour, backgrounds) >= kMinContrast)
        return colour;
    // Toward black on light backgrounds, toward white on dark ones (by their mean luminance).
    double mean = 0;
    for (const QColor &bg : backgrounds)
        mean += luminance(bg);
    const QColor target = mean / backgrounds.size() > 0.18 ? QColor(Qt::black) : QColor(Qt::white);
    for (int step = 1; step <= 20; ++step) {
        const QColor c = mix(colour, target, step / 20.0);
        if (worstContrast(c, backgrounds) >= kMinContrast)
            return c;
    }
    return target;
}

bool ReadableHighlighter::setBackgrounds(const QVector<QColor> &backgrounds)
{
    if (backgrounds == m_backgrounds)
        return false;
    m_backgrounds = backgrounds;
    return true;
}

void ReadableHighlighter::applyFormat(int offset, int length, const KSyntaxHighlighting::Format &format)
{
    // SyntaxHighlighter::applyFormat's format, with the foreground made readable.
    if (length == 0)
        return;
    const KSyntaxHighlighting::Theme t = theme();
    QTextCharFormat tf;
    tf.setForeground(readable(format.textColor(t), m_backgrounds));
    if (format.hasBackgroundColor(t))
        tf.setBackground(format.backgroundColor(t));
    if (format.isBold(t))
        tf.setFontWeight(QFont::Bold);
    if (format.isItalic(t))
        tf.setFontItalic(true);
    if (format.isUnderline(t))
        tf.setFontUnderline(true);
    if (format.isStrikeThrough(t))
        tf.setFontStrikeOut(true);
    setFormat(offset, length, tf);
}

} // namespace ak
