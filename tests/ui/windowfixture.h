#pragma once

// What the window's tests share: a run opened and loaded, and a named child found or the test
// stopped with the name that is missing (tests reach widgets by objectName, not by getters).

#include "mainwindow.h"

#include <QObject>
#include <QSignalSpy>
#include <QString>
#include <QtTest>

namespace ak::test {

inline bool openAndWait(MainWindow &w, const QString &dir)
{
    QSignalSpy loaded(&w, &MainWindow::runLoaded);
    w.openRun(dir);
    return loaded.wait(10000) || loaded.count() > 0;
}

// The child of `root` called `name`; a test that asks for a child the window does not have is
// stopped there, with the name, instead of crashing on a null pointer further on.
template<class T>
T *named(const QObject *root, const char *name)
{
    T *child = root->findChild<T *>(QLatin1String(name));
    if (!child)
        qFatal("no %s named \"%s\" under %s", T::staticMetaObject.className(), name,
            qPrintable(root->objectName()));
    return child;
}

} // namespace ak::test
