#pragma once

#include <QWidget>

class QLabel;
class QPushButton;

namespace ak {

// What a region shows when it has nothing to show: a title saying what is missing and a line saying
// what to do about it, optionally a button for that action. Never sample data.
class EmptyState : public QWidget
{
    Q_OBJECT
public:
    explicit EmptyState(QWidget *parent = nullptr);

    void setMessage(const QString &title, const QString &body);
    QString title() const;
    QString body() const;
    // Shows a button that triggers action (e.g. File ▸ Open); nullptr hides it.
    void setAction(QAction *action);

private:
    QLabel *m_title;
    QLabel *m_body;
    QPushButton *m_button;
    QAction *m_action = nullptr;
};

} // namespace ak
