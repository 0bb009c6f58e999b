#include "widgets/emptystate.h"

#include <QAction>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace ak {

EmptyState::EmptyState(QWidget *parent)
    : QWidget(parent)
    , m_title(new QLabel(this))
    , m_body(new QLabel(this))
    , m_button(new QPushButton(this))
{
    QFont f = m_title->font();
    f.setPointSizeF(f.pointSizeF() * 1.25);
    f.setBold(true);
    m_title->setFont(f);
    m_title->setAlignment(Qt::AlignHCenter);
    m_title->setWordWrap(true);
    m_body->setAlignment(Qt::AlignHCenter);
    m_body->setWordWrap(true);
    m_body->setTextInteractionFlags(Qt::TextSelectableByMouse); // commands can be copied
    QPalette p = m_body->palette();
    p.setColor(QPalette::WindowText, p.color(QPalette::PlaceholderText));
    m_body->setPalette(p);
    m_button->hide();
    connect(m_button, &QPushButton::clicked, this, [this] {
        if (m_action)
            m_action->trigger();
    });

    auto *layout = new QVBoxLayout(this);
    layout->addStretch(1);
    layout->addWidget(m_title);
    layout->addWidget(m_body);
    layout->addWidget(m_button, 0, Qt::AlignHCenter);
    layout->addStretch(1);
    layout->setContentsMargins(24, 24, 24, 24);
}

void EmptyState::setMessage(const QString &title, const QString &body)
{
    m_title->setText(title);
    m_body->setText(body);
    m_body->setVisible(!body.isEmpty());
}

QString EmptyState::title() const
{
    return m_title->text();
}

QString EmptyState::body() const
{
    return m_body->text();
}

void EmptyState::setAction(QAction *action)
{
    m_action = action;
    m_button->setVisible(action != nullptr);
    if (action)
        m_button->setText(action->text().remove(QLatin1Char('&')));
}

} // namespace ak
