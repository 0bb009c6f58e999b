#pragma once

#include <KSyntaxHighlighting/SyntaxHighlighter>

#include <QColor>
#include <QVector>

namespace ak {

// KSyntaxHighlighting's SyntaxHighlighter with every token colour kept readable on the backgrounds it
// is drawn on. The bundled themes' colours are chosen for a plain editor: on the diff's red and green
// line and change colours some fall below WCAG's 4.5:1 (the light theme's #ca60ca on a removed
// character measured 1.5:1). A colour that is too close to a background is moved toward black or
// white, keeping its hue, until it reads on all of them.
class ReadableHighlighter : public KSyntaxHighlighting::SyntaxHighlighter
{
public:
    static constexpr double kMinContrast = 4.5; // WCAG 2 AA for body text

    explicit ReadableHighlighter(QTextDocument *document);

    // The colours the text lies on (the base, each diff line colour over it, each change colour over
    // that). True when they changed: the caller re-highlights (once, with a theme change too).
    bool setBackgrounds(const QVector<QColor> &backgrounds);
    // `colour`, or the nearest mix of it with black or white that has kMinContrast on every one of
    // `backgrounds`.
    static QColor readable(const QColor &colour, const QVector<QColor> &backgrounds);
    static double contrast(const QColor &a, const QColor &b);

protected:
    void applyFormat(int offset, int length, const KSyntaxHighlighting::Format &format) override;

private:
    QVector<QColor> m_backgrounds;
};

} // namespace ak
