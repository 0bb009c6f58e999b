#pragma once

#include <QObject>
#include <QString>

class QMenu;

namespace ak {

// File ▸ Open Recent: the runs opened last (folders or ssh:// addresses), newest first, kept in the
// user's settings store so that they outlive the window. Choosing one leaves through openRequested;
// the window opens it as if typed in.
class RecentRunsMenu : public QObject
{
    Q_OBJECT
public:
    // Fills `menu` (not owned: it belongs to the menu bar) and parents itself to it.
    explicit RecentRunsMenu(QMenu *menu);

    // `dir` was opened: it goes to the top, and the oldest beyond the limit drop off.
    void add(const QString &dir);

Q_SIGNALS:
    void openRequested(const QString &dir);

private:
    void rebuild();

    QMenu *m_menu;
};

} // namespace ak
