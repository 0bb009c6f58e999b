#include "dialogs/browserow.h"

#include <QCoreApplication>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QPushButton>

namespace ak {

QWidget *withBrowse(QLineEdit *edit, QPushButton **button, QWidget *parent)
{
    auto *row = new QWidget(parent);
    auto *layout = new QHBoxLayout(row);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(edit, 1);
    *button = new QPushButton(QCoreApplication::translate("ak::BrowseRow", "Browse…"), row);
    layout->addWidget(*button);
    return row;
}

} // namespace ak
