#include "widgets/errortint.h"

#include <QColor>
#include <QEvent>
#include <QLabel>
#include <QPalette>

namespace ak {

ErrorTint::ErrorTint(QLabel *label)
    : QObject(label)
{
    setObjectName(QStringLiteral("ErrorTint"));
    label->installEventFilter(this);
}

QColor ErrorTint::color(const QPalette &palette)
{
    // Both reds keep a contrast of at least 4.5:1 (WCAG AA) on white / on #2b2b2b.
    return palette.color(QPalette::Window).lightness() < 128 ? QColor(0xff, 0x7b, 0x72)
                                                             : QColor(0xb0, 0x20, 0x20);
}

void ErrorTint::apply(QLabel *label, bool on)
{
    ErrorTint *tint = label->findChild<ErrorTint *>(QString(), Qt::FindDirectChildrenOnly);
    if (!on) {
        delete tint;
        // A default palette resolves nothing: the label inherits its parent's text colour again.
        label->setPalette(QPalette());
        return;
    }
    if (!tint)
        new ErrorTint(label);
    paint(label);
}

void ErrorTint::paint(QLabel *label)
{
    const QColor wanted = color(label->palette());
    if (label->palette().color(QPalette::WindowText) == wanted)
        return; // also ends the PaletteChange that the setPalette below sends
    QPalette p = label->palette();
    p.setColor(QPalette::WindowText, wanted);
    label->setPalette(p);
}

bool ErrorTint::eventFilter(QObject *watched, QEvent *event)
{
    if (event->type() == QEvent::PaletteChange)
        paint(static_cast<QLabel *>(watched));
    return QObject::eventFilter(watched, event);
}

} // namespace ak
