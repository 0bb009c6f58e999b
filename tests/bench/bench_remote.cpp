// What a launcher costs per experiment: the same requests through a local worker and through ssh on
// loopback (a private sshd, tests/remote/sshserver.h), side by side. Results: docs/benchmarks.md.
//
// With RUN_DIR (e.g. from autokernel-gen-run), also how long a remote window waits for a new
// experiment: lines appended to that run's log (as its writer appends them) against the moment the
// window's mirror (RunMirror: rsync over ssh) has them.
//
//   cmake --build --preset ci --target bench_remote autokernel-gen-run
//   build/ci/tests/bench/autokernel-gen-run /tmp/big
//   AUTOKERNEL_TEST_PYTHON=/usr/bin/python3 build/ci/tests/bench/bench_remote [ROUNDS [RUN_DIR]]
//       build/ci/tests/bench/bench_remote [ROUNDS [RUN_DIR]]
#include "loop/harnessclient.h"
#include "pythonscripts.h"
#include "remoterun.h"
#include "runmirror.h"
#include "sshserver.h"
#include "workerclient.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTextStream>
#include <QThread>

#include <algorithm>
#include <vector>

using namespace ak;

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

double p90(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[std::min(v.size() - 1, v.size() * 9 / 10)];
}

struct Timings
{
    std::vector<double> startMs, roundTripMs, benchS;
};

Timings measure(const WorkerLauncher &launcher, const QString &python, const QString &kernel, int rounds,
    const QString &farCache)
{
    Timings t;
    const nlohmann::json payload = { { "kernel_source_b64", std::string(6000, 'A') } }; // a kernel.py's size
    for (int i = 0; i < 5; ++i) {
        if (i == 0 && !farCache.isEmpty())
            QDir(farCache + QStringLiteral("/autokernel/remote")).removeRecursively(); // cold: files fetched
        WorkerClient w;
        w.setPython(python);
        w.setLauncher(launcher);
        QElapsedTimer clock;
        clock.start();
        QString error;
        if (!w.start(&error))
            qFatal("worker did not start: %s", qPrintable(error));
        t.startMs.push_back(clock.nsecsElapsed() / 1e6);
        if (i > 0)
            continue;
        for (int r = 0; r < rounds; ++r) {
            clock.restart();
            if (!w.request(QStringLiteral("ping"), payload, 10000).ok())
                qFatal("ping failed");
            t.roundTripMs.push_back(clock.nsecsElapsed() / 1e6);
        }
        HarnessClient harness(&w);
        for (int r = 0; r < 8; ++r) {
            BenchRequest req;
            req.kernelPath = kernel;
            req.device = QStringLiteral("cpu");
            req.quick = true;
            clock.restart();
            const BenchResult b = harness.bench(req);
            if (b.status != BenchStatus::Ok)
                qFatal("bench failed: %s", qPrintable(b.failure));
            t.benchS.push_back(clock.nsecsElapsed() / 1e9);
        }
    }
    return t;
}

// Appends `count` lines to RUN_DIR/experiments.jsonl at random moments while a RunMirror follows it,
// and returns, per line, the milliseconds until the mirror's copy held it; *passMs the pass times.
std::vector<double> mirrorLatency(
    const test::SshServer &ssh, const QString &runDir, int count, std::vector<double> *passMs)
{
    QStringList words = ssh.launcher().split(QLatin1Char(' '));
    const QString host = words.takeLast();
    RemoteRun run
        = RemoteRun::parse(QStringLiteral("ssh://%1%2").arg(host, QDir(runDir).absolutePath()), nullptr);
    run.setSsh(words);
    QDir(run.cacheDir()).removeRecursively();
    RunMirror mirror(run);
    int passes = 0;
    QObject::connect(&mirror, &RunMirror::synced, [&](bool, bool changed) {
        ++passes;
        if (changed)
            passMs->push_back(double(mirror.lastPassMs()));
    });
    QObject::connect(
        &mirror, &RunMirror::failed, [](const QString &e, bool) { qFatal("mirror: %s", qPrintable(e)); });
    QElapsedTimer first;
    first.start();
    mirror.start();
    while (passes == 0)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents, 50);
    QTextStream(stdout) << "first copy of " << runDir << ": " << first.elapsed() << " ms\n";
    passMs->clear();
    const QString log = runDir + QStringLiteral("/experiments.jsonl");
    const QString copy = run.cacheDir() + QStringLiteral("/experiments.jsonl");
    std::vector<double> out;
    for (int i = 0; i < count; ++i) {
        // Between passes at a random phase, as a writer's experiments arrive.
        QElapsedTimer wait;
        wait.start();
        const int pause = 200 + int(QRandomGenerator::global()->bounded(800));
        while (wait.elapsed() < pause)
            QCoreApplication::processEvents(QEventLoop::AllEvents, 10);
        const QByteArray marker = QStringLiteral("{\"bench_marker\": %1}\n").arg(i).toUtf8();
        QFile f(log);
        if (!f.open(QIODevice::Append))
            qFatal("cannot append to %s", qPrintable(log));
        f.write(marker);
        f.close();
        QElapsedTimer seen;
        seen.start();
        for (;;) {
            QCoreApplication::processEvents(QEventLoop::AllEvents, 5);
            QFile c(copy);
            if (c.open(QIODevice::ReadOnly) && c.size() >= f.size()) {
                c.seek(c.size() - marker.size());
                if (c.read(marker.size()) == marker)
                    break;
            }
            if (seen.elapsed() > 30000)
                qFatal("the mirror did not get line %d within 30 s", i);
            QThread::msleep(2);
        }
        out.push_back(seen.nsecsElapsed() / 1e6);
    }
    return out;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int rounds = argc > 1 ? std::max(10, atoi(argv[1])) : 300;
    const QString python = qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
    QTemporaryDir dir;
    const QString kernel = dir.filePath(QStringLiteral("kernel.py"));
    {
        QFile in(PythonScripts::directory() + QStringLiteral("/harness/starters/cpu/softmax.py"));
        QFile out(kernel);
        if (!in.open(QIODevice::ReadOnly) || !out.open(QIODevice::WriteOnly))
            qFatal("cannot copy the softmax starter");
        out.write(in.readAll());
    }
    test::SshServer ssh;
    QString error;
    if (!ssh.start(&error))
        qFatal("%s", qPrintable(error));
    QString launcherError;
    const Timings local = measure(WorkerLauncher(), python, kernel, rounds, QString());
    const Timings remote = measure(
        WorkerLauncher::parse(ssh.launcher(), &launcherError), python, kernel, rounds, ssh.farCache());
    QTextStream out(stdout);
    out << "worker launcher bench, " << rounds << " round trips, 8 quick CPU benches (softmax starter)\n";
    out << QStringLiteral("%1 %2 %3\n")
               .arg(QString(), -34)
               .arg(QStringLiteral("local"), 12)
               .arg(QStringLiteral("ssh"), 12);
    auto row = [&](const QString &what, double a, double b, const QString &unit) {
        out << QStringLiteral("%1 %2 %3  (+%4 %5)\n")
                   .arg(what, -34)
                   .arg(a, 12, 'f', 3)
                   .arg(b, 12, 'f', 3)
                   .arg(b - a, 0, 'f', 3)
                   .arg(unit);
    };
    row(QStringLiteral("round trip median (ms)"), median(local.roundTripMs), median(remote.roundTripMs),
        QStringLiteral("ms"));
    row(QStringLiteral("round trip p90 (ms)"), p90(local.roundTripMs), p90(remote.roundTripMs),
        QStringLiteral("ms"));
    row(QStringLiteral("cold start, files fetched (ms)"), local.startMs.front(), remote.startMs.front(),
        QStringLiteral("ms"));
    row(QStringLiteral("warm start median (ms)"), median({ local.startMs.begin() + 1, local.startMs.end() }),
        median({ remote.startMs.begin() + 1, remote.startMs.end() }), QStringLiteral("ms"));
    row(QStringLiteral("quick CPU bench median (s)"), median(local.benchS), median(remote.benchS),
        QStringLiteral("s"));
    if (argc > 2) {
        std::vector<double> passMs;
        const std::vector<double> lat = mirrorLatency(ssh, QString::fromLocal8Bit(argv[2]), 40, &passMs);
        out << QStringLiteral(
            "remote window: a new log line in the mirror after median %1 ms, p90 %2 ms, max "
            "%3 ms (40 lines); one transfer median %4 ms\n")
                   .arg(median(lat), 0, 'f', 0)
                   .arg(p90(lat), 0, 'f', 0)
                   .arg(*std::max_element(lat.begin(), lat.end()), 0, 'f', 0)
                   .arg(median(passMs), 0, 'f', 0);
    }
    return 0;
}
