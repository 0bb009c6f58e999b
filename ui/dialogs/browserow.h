#pragma once

class QLineEdit;
class QPushButton;
class QWidget;

namespace ak {

// A form row of a path field with a "Browse…" button beside it (the dialogs' file and folder
// choosers); the button is returned in *button for the caller to connect.
QWidget *withBrowse(QLineEdit *edit, QPushButton **button, QWidget *parent);

} // namespace ak
