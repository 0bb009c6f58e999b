#pragma once

#include <QObject>

class QColor;
class QLabel;
class QPalette;

namespace ak {

// The red of an error line in a dialog, chosen once for every dialog: dark enough to read on a light
// window, lighter on a dark one (a fixed #b02020 all but vanished on dark themes), and following a
// theme switched live: the tint watches its label's PaletteChange and repaints from the new window
// colour.
class ErrorTint : public QObject
{
    Q_OBJECT

public:
    // The error text colour for a palette whose window colour is palette.color(QPalette::Window).
    static QColor color(const QPalette &palette);
    // Tints `label`'s text (on) or gives it back the palette's own text colour (off).
    static void apply(QLabel *label, bool on = true);

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    explicit ErrorTint(QLabel *label);
    static void paint(QLabel *label);
};

} // namespace ak
