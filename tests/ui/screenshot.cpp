// ak-ui-screenshot: opens a run in the real MainWindow, selects the top kernel and its newest
// commit, and saves QWidget::grab() as a PNG. For docs/screenshot-*.png; not a test.
// Usage: ak-ui-screenshot OUT.png [RUN_DIR]   (run under xvfb-run or QT_QPA_PLATFORM=offscreen)
#include "diffview.h"
#include "experimentmodel.h"
#include "mainwindow.h"

#include <QApplication>
#include <QItemSelectionModel>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QTimer>

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("autokernel-screenshot")); // own settings
    const QStringList args = app.arguments();
    if (args.size() < 2)
        return 2;
    const QString out = args.at(1);
    ak::MainWindow w;
    w.resize(1600, 1000);
    w.show();
    auto save = [&] {
        QTimer::singleShot(1500, &app, [&] {
            w.grab().save(out);
            app.quit();
        });
    };
    if (args.size() < 3) {
        save();
        return app.exec();
    }
    QObject::connect(&w, &ak::MainWindow::runLoadFailed, &app, [&] { save(); });
    QObject::connect(&w, &ak::MainWindow::runLoaded, &app, [&] {
        QTableView *kernels = w.workspace()->kernelView();
        kernels->selectionModel()->setCurrentIndex(kernels->model()->index(0, 0),
                                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QTableView *commits = w.workspace()->commitView();
        // Newest kept commit of that kernel, if any, else the newest.
        int row = 0;
        for (int r = 0; r < commits->model()->rowCount(); ++r) {
            if (commits->model()->index(r, 0).data(ak::ExperimentModel::StatusRole).toInt() == int(ak::ExperimentStatus::Kept)) {
                row = r;
                break;
            }
        }
        commits->selectionModel()->setCurrentIndex(commits->model()->index(row, 0),
                                                   QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        save();
    });
    w.openRun(args.at(2));
    return app.exec();
}
