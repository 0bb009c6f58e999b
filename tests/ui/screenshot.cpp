// ak-ui-screenshot: opens a run in the real MainWindow, selects the top kernel and its newest
// commit, and saves QWidget::grab() as a PNG. For docs/screenshot-*.png; not a test.
// Usage: ak-ui-screenshot OUT.png [RUN_DIR | --model] [--model-chart] [--review] [--present]
// (run under xvfb-run or QT_QPA_PLATFORM=offscreen)
// --model: a GPT-2-like run with a verification.json (tests/ui/modelfixture.h), made in a temporary
// directory. A run with a verification.json gets the Model dock as the window sizes it.
// --model-chart: the chart's Model tab (the model's speedup over the run) instead of the kernel's.
// --review: the review pass: Show Pending Only on and the first pending experiment selected (Next
// Pending), so the Accept / Reject buttons are live.
// --present: View ▸ Presentation, grabbed at the window's size instead of the window.
// --size=WxH: the window's size, 1600x1000 unless given (docs/ is taken at 1280x800).
// --model-dock=PX: the Model dock's width once the run is open (else the window's own choice).
// --kernel=TEXT: select the first kernel with a cell reading TEXT (its op, say) instead of the top one,
// and its newest experiment, with the commit list widened to its descriptions (one kernel's search).
#include "mainwindow.h"
#include "modelfixture.h"
#include "models/experimentmodel.h"
#include "models/kerneltablemodel.h"
#include "widgets/diffview.h"

#include <QAction>
#include <QApplication>
#include <QDockWidget>
#include <QItemSelectionModel>
#include <QRegularExpression>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTextStream>
#include <QTimer>

// The presentation window, found among the application's windows as a user would (it is not a
// child of the main window).
static QWidget *presentation()
{
    for (QWidget *w : QApplication::topLevelWidgets())
        if (w->objectName() == QLatin1String("PresentationView"))
            return w;
    qFatal("no PresentationView window");
    return nullptr;
}

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("autokernel-screenshot")); // own settings
    const QStringList args = app.arguments();
    if (args.size() < 2)
        return 2;
    const QString out = args.at(1);
    ak::MainWindow w;
    // --size=WxH: the window's size (default 1600×1000); docs/ takes 1280×800, the smallest screen
    // the window is laid out for.
    QSize size(1600, 1000);
    const int sizeArg = int(args.indexOf(QRegularExpression(QStringLiteral("^--size=\\d+x\\d+$"))));
    if (sizeArg > 0) {
        const QStringList wh = args.at(sizeArg).mid(7).split(QLatin1Char('x'));
        size = QSize(wh.at(0).toInt(), wh.at(1).toInt());
    }
    w.resize(size);
    w.show();
    const bool present = args.contains(QStringLiteral("--present"));
    auto save = [&] {
        QTimer::singleShot(1500, &app, [&] {
            (present ? presentation() : &w)->grab().save(out);
            app.quit();
        });
    };
    if (args.size() < 3 || args.at(2).startsWith(QLatin1String("--size="))) { // no run: the empty window
        save();
        return app.exec();
    }
    QTemporaryDir modelRun;
    QString runDir = args.at(2);
    if (runDir == QLatin1String("--model")) {
        QString error;
        if (!ak::test::makeVerifiedRun(modelRun.path(), &error)) {
            QTextStream(stderr) << "ak-ui-screenshot: " << error << Qt::endl;
            return 1;
        }
        runDir = modelRun.path();
    }
    // --model-dock=PX: the Model dock's width; else as wide as the window makes it
    // (MainWindow::fitModelDock: 30 % for a verified run). A fixed 620 px cut the kernel chart's
    // legend at 1280 px.
    const int dockArg = int(args.indexOf(QRegularExpression(QStringLiteral("^--model-dock=\\d+$"))));
    if (dockArg > 0) {
        const int dockWidth = args.at(dockArg).mid(13).toInt();
        QObject::connect(&w, &ak::MainWindow::runLoaded, &app, [&w, dockWidth] {
            if (auto *dock = w.findChild<QDockWidget *>(QStringLiteral("ModelDock")))
                w.resizeDocks({ dock }, { dockWidth }, Qt::Horizontal);
            // What is left goes mostly to the charts, so that their legends stay whole beside the
            // wider dock; the kernel table keeps its first columns.
            QWidget *up = w.findChild<QTabWidget *>(QStringLiteral("ChartTabs"));
            while (up && !qobject_cast<QSplitter *>(up->parentWidget()))
                up = up->parentWidget();
            if (up)
                static_cast<QSplitter *>(up->parentWidget())->setSizes({ 45, 55 });
        });
    }
    QObject::connect(&w, &ak::MainWindow::runLoadFailed, &app, [&] { save(); });
    QObject::connect(&w, &ak::MainWindow::runLoaded, &app, [&] {
        QTableView *kernels = w.findChild<QTableView *>(QStringLiteral("KernelView"));
        // --model: the layernorm with three keeps, and the table scrolled to its In model column.
        int kernelRow = runDir == args.at(2) ? 0 : kernels->model()->rowCount() - 1;
        const int kernelArg = int(args.indexOf(QRegularExpression(QStringLiteral("^--kernel=.+"))));
        const QString kernelName = kernelArg > 0 ? args.at(kernelArg).mid(9) : QString();
        for (int r = kernels->model()->rowCount() - 1; !kernelName.isEmpty() && r >= 0; --r)
            for (int c = 0; c < kernels->model()->columnCount(); ++c)
                if (kernels->model()->index(r, c).data().toString() == kernelName)
                    kernelRow = r;
        kernels->selectionModel()->setCurrentIndex(kernels->model()->index(kernelRow, 0),
            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        if (kernelRow != 0 && kernelName.isEmpty())
            kernels->scrollTo(kernels->model()->index(kernelRow, ak::KernelTableModel::InModelColumn));
        QTableView *commits = w.findChild<QTableView *>(QStringLiteral("CommitView"));
        // Newest kept commit of that kernel, if any, else the newest.
        int row = 0;
        for (int r = 0; kernelName.isEmpty() && r < commits->model()->rowCount(); ++r) {
            if (commits->model()->index(r, 0).data(ak::ExperimentModel::StatusRole).toInt()
                == int(ak::ExperimentStatus::Kept)) {
                row = r;
                break;
            }
        }
        commits->selectionModel()->setCurrentIndex(
            commits->model()->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        if (!kernelName.isEmpty()) {
            for (int c : { ak::ExperimentModel::KernelColumn, ak::ExperimentModel::RoofColumn,
                     ak::ExperimentModel::ThroughputColumn, ak::ExperimentModel::CommitColumn,
                     ak::ExperimentModel::FinishedColumn })
                commits->setColumnHidden(c, true);
            commits->resizeColumnsToContents();
            QWidget *up = commits;
            while (up && !qobject_cast<QSplitter *>(up->parentWidget()))
                up = up->parentWidget();
            if (up)
                static_cast<QSplitter *>(up->parentWidget())->setSizes({ 1000, 600 });
        }
        if (args.contains(QStringLiteral("--model-chart")))
            w.findChild<QTabWidget *>(QStringLiteral("ChartTabs"))->setCurrentIndex(1);
        if (args.contains(QStringLiteral("--review"))) {
            w.findChild<QAction *>(QStringLiteral("PendingOnlyAction"))->setChecked(true);
            w.findChild<QAction *>(QStringLiteral("NextPendingAction"))->trigger();
        }
        if (present) {
            w.present();
            presentation()->showNormal();
            presentation()->resize(size);
        }
        save();
    });
    w.openRun(runDir);
    return app.exec();
}
