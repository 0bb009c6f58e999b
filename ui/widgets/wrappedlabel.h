#pragma once

#include <QString>

class QLabel;
class QWidget;

namespace ak {

// A word-wrapped, selectable label: the explanatory text of dialogs and docks.
QLabel *wrappedLabel(const QString &text, QWidget *parent, const QString &objectName = QString());

} // namespace ak
