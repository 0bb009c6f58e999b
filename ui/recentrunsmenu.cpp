#include "recentrunsmenu.h"

#include <QAction>
#include <QDir>
#include <QMenu>
#include <QSettings>
#include <QStringList>

namespace ak {

namespace {

constexpr int MaxRecent = 8;

// The key the window has always used: renaming it would forget every user's list.
QString recentKey()
{
    return QStringLiteral("recentRuns");
}

} // namespace

RecentRunsMenu::RecentRunsMenu(QMenu *menu)
    : QObject(menu)
    , m_menu(menu)
{
    rebuild();
}

void RecentRunsMenu::add(const QString &dir)
{
    QSettings settings;
    QStringList recent = settings.value(recentKey()).toStringList();
    recent.removeAll(dir);
    recent.prepend(dir);
    while (recent.size() > MaxRecent)
        recent.removeLast();
    settings.setValue(recentKey(), recent);
    rebuild();
}

void RecentRunsMenu::rebuild()
{
    m_menu->clear();
    const QStringList recent = QSettings().value(recentKey()).toStringList();
    for (const QString &dir : recent)
        m_menu->addAction(QDir::toNativeSeparators(dir), this, [this, dir] { Q_EMIT openRequested(dir); });
    if (!recent.isEmpty()) {
        m_menu->addSeparator();
        m_menu->addAction(tr("Clear List"), this, [this] {
            QSettings().remove(recentKey());
            rebuild();
        });
    }
    m_menu->setEnabled(!recent.isEmpty());
}

} // namespace ak
