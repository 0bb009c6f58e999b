#include "mainwindow.h"
#include "testregistry.h"

#include <QLabel>
#include <QStatusBar>

class MainWindowTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void statusBarShowsDevice()
    {
        ak::MainWindow w;
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        const auto labels = w.statusBar()->findChildren<QLabel *>();
        bool found = false;
        for (QLabel *l : labels)
            found = found || l->text().contains(QStringLiteral("CPU")) || l->text().contains(QStringLiteral("GPU"));
        QVERIFY(found);
    }
};

AK_TEST_CLASS(MainWindowTest)
#include "tst_mainwindow.moc"
