// bench_runstore: times RunLoader::load on a run directory (e.g. one written by autokernel-gen-run)
// and the recording of experiments into it (begin + finish: commit, log append, fsync).
// Usage: bench_runstore DIR [--records 100]. It appends the recorded experiments to DIR.
#include "runloader.h"
#include "runstore.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QTextStream>

#include <algorithm>

using namespace ak;

namespace {
// kB from /proc/self/status ("VmRSS", "VmHWM").
long procStatus(const char *key)
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith(key))
            return line.mid(int(qstrlen(key)) + 1).trimmed().split(' ').first().toLong();
    return -1;
}

double median(QVector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.isEmpty() ? 0 : v[v.size() / 2];
}
} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QStringList args = app.arguments().mid(1);
    int records = 100;
    if (const int i = int(args.indexOf(QStringLiteral("--records"))); i >= 0 && i + 1 < args.size()) {
        records = args[i + 1].toInt();
        args.remove(i, 2);
    }
    QTextStream out(stdout);
    if (args.size() != 1) {
        QTextStream(stderr) << "usage: bench_runstore DIR [--records N]\n";
        return 2;
    }
    const QString dir = args.first();
    const long rssBefore = procStatus("VmRSS:");
    QVector<double> loads;
    int experiments = 0, kernels = 0;
    for (int i = 0; i < 5; ++i) {
        QElapsedTimer t;
        t.start();
        QString error;
        RunSnapshotPtr s = RunLoader::load(dir, &error);
        loads << t.nsecsElapsed() / 1e6;
        if (!s) {
            QTextStream(stderr) << error << '\n';
            return 1;
        }
        experiments = int(s->experiments.size());
        kernels = int(s->kernels.size());
        if (i == 0)
            out << "first load: " << loads.last() << " ms, RSS +"
                << (procStatus("VmRSS:") - rssBefore) / 1024.0 << " MiB while the snapshot is held\n";
    }
    out << "load " << kernels << " kernels / " << experiments << " experiments: median " << median(loads)
        << " ms, min " << *std::min_element(loads.cbegin(), loads.cend()) << " ms; peak RSS "
        << procStatus("VmHWM:") / 1024.0 << " MiB\n";

    QElapsedTimer t;
    t.start();
    QString error;
    auto store = RunStore::open(dir, &error);
    if (!store) {
        QTextStream(stderr) << error << '\n';
        return 1;
    }
    out << "open for writing (lock + repair check): " << t.nsecsElapsed() / 1e6 << " ms\n";
    const QString kernel = store->state().kernels.value(0).folder.section(QLatin1Char('/'), -1);
    QVector<double> keep, revert;
    for (int i = 0; i < records; ++i) {
        const bool kept = i % 4 == 0;
        QElapsedTimer r;
        r.start();
        const Experiment e = store->beginExperiment(kernel, "BLOCK = " + QByteArray::number(i) + "\n",
            QStringLiteral("bench"), QStringLiteral("bench %1").arg(i), &error);
        Metrics m;
        m.latencyUs = 10;
        m.correct = true;
        if (e.id == 0
            || !store->finishExperiment(
                e.id, kept ? ExperimentStatus::Kept : ExperimentStatus::Reverted, m, QString(), &error)) {
            QTextStream(stderr) << error << '\n';
            return 1;
        }
        (kept ? keep : revert) << r.nsecsElapsed() / 1e6;
    }
    QVector<double> all = keep + revert;
    out << "record (begin + finish, fsync on): median " << median(all) << " ms over " << all.size()
        << " (keep " << median(keep) << " ms, revert " << median(revert) << " ms), max "
        << *std::max_element(all.cbegin(), all.cend()) << " ms\n";
    return 0;
}
