// bench_live: the window following a run that another process writes, at a given rate. Opens RUN_DIR
// in the real MainWindow, starts a writer (this program with --writer) that records experiments
// through the real RunStore at --rate per second for --seconds, and measures, on the GUI thread:
//   - how long after its log line was written each experiment appears in the commit list's model;
//   - how long the event loop stalls, with a 5 ms precise timer as the probe (a tick that comes late
//     by X ms means the GUI thread was busy X ms).
// Usage: bench_live RUN_DIR [--rate 10] [--seconds 60] [--model-tab]   (under xvfb-run or
// QT_QPA_PLATFORM=offscreen; --model-tab: the chart's Model tab in front, which follows every reload)
// The run is written to: make a fresh one with autokernel-gen-run for each measurement.
#include "mainwindow.h"
#include "models/experimentmodel.h"
#include "runstore.h"
#include "widgets/runworkspace.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDateTime>
#include <QElapsedTimer>
#include <QFile>
#include <QHash>
#include <QProcess>
#include <QRandomGenerator>
#include <QTabWidget>
#include <QTextStream>
#include <QThread>
#include <QTimer>

#include <algorithm>
#include <cstdio>

using namespace ak;

namespace {

// Peak resident memory of this process (VmHWM), MB.
double peakRssMb()
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith("VmHWM:"))
            return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
    return 0;
}

double percentile(QVector<double> v, double p)
{
    if (v.isEmpty())
        return 0;
    std::sort(v.begin(), v.end());
    return v.at(std::min<int>(int(v.size()) - 1, int(p * (v.size() - 1) + 0.5)));
}

// The writer: a loop's pace without a loop (begin + finish through the store, fsync on), one line
// "ID EPOCH_MS" on stdout after each finish.
int writer(const QString &dir, double rate, double seconds)
{
    QString error;
    std::unique_ptr<RunStore> store = RunStore::open(dir, &error);
    if (!store) {
        std::fprintf(stderr, "bench_live --writer: %s\n", qPrintable(error));
        return 1;
    }
    QStringList kernels;
    for (const KernelRecord &k : store->state().kernels)
        kernels << k.key();
    QRandomGenerator rng(7);
    QElapsedTimer clock;
    clock.start();
    for (int n = 0; clock.elapsed() < seconds * 1000; ++n) {
        const qint64 due = qint64(n * 1000.0 / rate);
        if (clock.elapsed() < due)
            QThread::msleep(due - clock.elapsed());
        const QString kernel = kernels.at(int(rng.bounded(int(kernels.size()))));
        const Experiment e = store->beginExperiment(kernel,
            "BLOCK = " + QByteArray::number(rng.bounded(4096)) + "\n# live " + QByteArray::number(n) + "\n",
            QStringLiteral("tune"), QStringLiteral("live %1").arg(n), &error);
        Metrics m;
        m.correct = true;
        m.latencyUs = 50 + rng.bounded(100.0);
        m.speedup = 100.0 / m.latencyUs;
        m.pctPeak = 30 + rng.bounded(40.0);
        if (e.id == 0 || !store->finishExperiment(e.id, ExperimentStatus::Reverted, m, QString(), &error)) {
            std::fprintf(stderr, "bench_live --writer: %s\n", qPrintable(error));
            return 1;
        }
        std::printf("%d %lld\n", e.id, QDateTime::currentMSecsSinceEpoch());
        std::fflush(stdout);
    }
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QCommandLineParser p;
    p.addPositionalArgument(QStringLiteral("run"), QStringLiteral("run directory (it is written to)"));
    p.addOption({ QStringLiteral("rate"), QStringLiteral("experiments per second"), QStringLiteral("n"),
        QStringLiteral("10") });
    p.addOption({ QStringLiteral("seconds"), QStringLiteral("how long the writer writes"),
        QStringLiteral("s"), QStringLiteral("60") });
    p.addOption({ QStringLiteral("writer"), QStringLiteral("be the writer (internal)") });
    p.addOption({ QStringLiteral("model-tab"), QStringLiteral("the chart's Model tab in front") });
    p.process(app);
    if (p.positionalArguments().size() != 1)
        p.showHelp(2);
    const QString dir = p.positionalArguments().first();
    const double rate = p.value(QStringLiteral("rate")).toDouble();
    const double seconds = p.value(QStringLiteral("seconds")).toDouble();
    if (p.isSet(QStringLiteral("writer")))
        return writer(dir, rate, seconds);

    QTextStream out(stdout);
    MainWindow w;
    w.resize(1600, 1000);
    w.show();
    auto *ws = w.findChild<RunWorkspace *>(QStringLiteral("RunWorkspace"));
    if (p.isSet(QStringLiteral("model-tab")))
        ws->findChild<QTabWidget *>(QStringLiteral("ChartTabs"))->setCurrentIndex(1);
    QElapsedTimer openClock;
    openClock.start();
    bool opened = false;
    QObject::connect(&w, &MainWindow::runLoaded, &w, [&] {
        if (!opened)
            out << "open: " << openClock.elapsed() << " ms, " << ws->experimentModel()->rowCount()
                << " experiments, peak RSS " << peakRssMb() << " MB" << Qt::endl;
        opened = true;
    });
    w.openRun(dir);
    while (!opened)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    // What opening leaves queued (fitting the columns to the rows) is the open's cost, not the live
    // phase's: let it run before the probe starts.
    QElapsedTimer settle;
    settle.start();
    while (settle.elapsed() < 1000)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);

    // The probe: the GUI thread's stalls.
    QVector<double> stalls;
    QStringList longStalls; // "at T ms: S ms", where each stall over 30 ms happened
    QElapsedTimer tick, sinceStart;
    tick.start();
    sinceStart.start();
    QTimer probe;
    probe.setTimerType(Qt::PreciseTimer);
    probe.setInterval(5);
    QObject::connect(&probe, &QTimer::timeout, [&] {
        stalls << std::max(0.0, tick.nsecsElapsed() / 1e6 - 5.0);
        if (stalls.last() > 30)
            longStalls << QStringLiteral("%1 ms at %2 s")
                              .arg(stalls.last(), 0, 'f', 1)
                              .arg(sinceStart.elapsed() / 1000.0, 0, 'f', 1);
        tick.restart();
    });

    // The writer's lines: when each experiment was on disk.
    QHash<int, qint64> written;
    QHash<int, qint64> appeared; // id -> when the commit list first had it
    QProcess writerProcess;
    QByteArray pendingOut;
    QObject::connect(&writerProcess, &QProcess::readyReadStandardOutput, [&] {
        pendingOut += writerProcess.readAllStandardOutput();
        int nl;
        while ((nl = pendingOut.indexOf('\n')) >= 0) {
            const QList<QByteArray> parts = pendingOut.left(nl).split(' ');
            pendingOut.remove(0, nl + 1);
            if (parts.size() == 2)
                written.insert(parts[0].toInt(), parts[1].toLongLong());
        }
    });
    // Each model update: every written experiment now in the commit list has appeared.
    int maxSeen = ws->experimentModel()->rows().isEmpty() ? 0 : ws->experimentModel()->rows().last().id;
    auto check = [&] {
        const auto &rows = ws->experimentModel()->rows();
        const int newest = rows.isEmpty() ? 0 : rows.last().id;
        if (newest <= maxSeen)
            return;
        // Recorded by id, not against the writer's lines read so far: the window may show an
        // experiment before its line on the writer's pipe is read here.
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        for (int id = maxSeen + 1; id <= newest; ++id)
            appeared.insert(id, now);
        maxSeen = newest;
    };
    QObject::connect(ws->experimentModel(), &QAbstractItemModel::rowsInserted, &w, check);

    bool writerDone = false;
    QObject::connect(&writerProcess, &QProcess::finished, [&] { writerDone = true; });
    writerProcess.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    probe.start();
    writerProcess.start(QCoreApplication::applicationFilePath(),
        { QStringLiteral("--writer"), QStringLiteral("--rate"), QString::number(rate),
            QStringLiteral("--seconds"), QString::number(seconds), dir });
    QElapsedTimer total;
    total.start();
    while (!writerDone && total.elapsed() < (seconds + 30) * 1000)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    // Let the last ones arrive (at most 3 s).
    QElapsedTimer tail;
    tail.start();
    auto allAppeared = [&] {
        for (auto it = written.cbegin(); it != written.cend(); ++it)
            if (!appeared.contains(it.key()))
                return false;
        return true;
    };
    while (!allAppeared() && tail.elapsed() < 3000)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    probe.stop();

    QVector<double> lat;
    for (auto it = written.cbegin(); it != written.cend(); ++it)
        if (appeared.contains(it.key()))
            lat << double(appeared.value(it.key()) - it.value());
    const long over30 = std::count_if(stalls.cbegin(), stalls.cend(), [](double s) { return s > 30; });
    out << "written: " << written.size() << " in " << seconds << " s at " << rate
        << "/s; appeared: " << lat.size() << Qt::endl;
    out << "appear latency ms: median " << percentile(lat, 0.5) << ", p99 " << percentile(lat, 0.99)
        << ", max " << percentile(lat, 1.0)
        << ", over 1 s: " << std::count_if(lat.cbegin(), lat.cend(), [](double l) { return l > 1000; })
        << Qt::endl;
    out << "GUI stall ms: median " << percentile(stalls, 0.5) << ", p99 " << percentile(stalls, 0.99)
        << ", max " << percentile(stalls, 1.0) << ", stalls over 30 ms: " << over30 << " of " << stalls.size()
        << " ticks" << Qt::endl;
    out << "peak RSS at the end: " << peakRssMb() << " MB" << Qt::endl;
    if (!longStalls.isEmpty())
        out << "stalls over 30 ms: " << longStalls.join(QStringLiteral(", ")) << Qt::endl;
    return (lat.size() == written.size() && over30 == 0) ? 0 : 1;
}
