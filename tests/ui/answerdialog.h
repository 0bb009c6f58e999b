#pragma once

#include <QAbstractButton>
#include <QApplication>
#include <QMessageBox>

namespace ak::test {

// Answers the open question box called `name` (the window's confirmations are non-blocking
// QMessageBox::open() calls) with `button`; false when no such box is shown.
inline bool answer(const char *name, QMessageBox::StandardButton button)
{
    for (QWidget *w : QApplication::topLevelWidgets()) {
        auto *box = qobject_cast<QMessageBox *>(w);
        if (box && box->isVisible() && box->objectName() == QLatin1String(name) && box->button(button)) {
            box->button(button)->click();
            return true;
        }
    }
    return false;
}

} // namespace ak::test
