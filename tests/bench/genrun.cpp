// autokernel-gen-run: writes a synthetic run directory through the real RunStore, for benchmarks of
// the loader and of the GUI. Usage: autokernel-gen-run DIR [--kernels 50] [--experiments 10000]
// [--seed 1] [--durable]. Without --durable no fsync is issued (a throw-away run; same files).
#include "atomicfile.h"
#include "runstore.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QTextStream>

using namespace ak;

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser p;
    p.setApplicationDescription(QStringLiteral("Write a synthetic AutoKernel run directory."));
    p.addHelpOption();
    p.addPositionalArgument(QStringLiteral("dir"), QStringLiteral("run directory to create"));
    p.addOption({ QStringLiteral("kernels"), QStringLiteral("number of kernels"), QStringLiteral("n"),
        QStringLiteral("50") });
    p.addOption({ QStringLiteral("experiments"), QStringLiteral("number of experiments"), QStringLiteral("n"),
        QStringLiteral("10000") });
    p.addOption(
        { QStringLiteral("seed"), QStringLiteral("random seed"), QStringLiteral("n"), QStringLiteral("1") });
    p.addOption({ QStringLiteral("durable"), QStringLiteral("fsync every write, as a real run does") });
    p.process(app);
    QTextStream err(stderr);
    if (p.positionalArguments().size() != 1) {
        err << "autokernel-gen-run: give exactly one run directory\n";
        return 2;
    }
    AtomicFile::setSyncEnabled(p.isSet(QStringLiteral("durable")));
    const int kernels = p.value(QStringLiteral("kernels")).toInt();
    const int experiments = p.value(QStringLiteral("experiments")).toInt();
    QRandomGenerator rng(p.value(QStringLiteral("seed")).toUInt());

    QString error;
    auto store = RunStore::create(p.positionalArguments().first(),
        nlohmann::json { { "model", "synthetic" },
            { "device", { { "name", "Synthetic GPU" }, { "vendor", "nvidia" }, { "available", true } } },
            { "settings", { { "review_mode", false } } } },
        &error);
    if (!store) {
        err << "autokernel-gen-run: " << error << '\n';
        return 1;
    }
    QElapsedTimer timer;
    timer.start();
    const char *ops[] = { "matmul", "softmax", "layernorm", "rmsnorm", "flash_attention", "fused_mlp",
        "cross_entropy", "reduce" };
    QVector<double> best(kernels, 100.0);
    QStringList names;
    for (int i = 0; i < kernels; ++i) {
        KernelRecord k;
        k.rank = i + 1;
        k.opType = QString::fromLatin1(ops[i % 8]);
        k.name = QStringLiteral("%1_kernel_%2").arg(k.opType).arg(i);
        k.share = 0.5 / (i + 1);
        k.timeUs = 1000.0 / (i + 1);
        const Experiment base
            = store->addKernel(k, QByteArray("KERNEL_TYPE = \"") + ops[i % 8] + "\"\nBLOCK = 128\n", &error);
        if (base.id == 0) {
            err << "autokernel-gen-run: " << error << '\n';
            return 1;
        }
        Metrics m;
        m.latencyUs = 100;
        m.speedup = 1;
        m.correct = true;
        store->finishExperiment(base.id, ExperimentStatus::Baseline, m, QString(), &error);
        names << base.kernel;
    }
    for (int n = 0; n < experiments; ++n) {
        const int ki = int(rng.bounded(kernels));
        const QByteArray code = QByteArray("KERNEL_TYPE = \"") + ops[ki % 8] + "\"\nBLOCK = "
            + QByteArray::number(rng.bounded(4096)) + "\n# try " + QByteArray::number(n) + "\n";
        const Experiment e = store->beginExperiment(names[ki], code, QStringLiteral("tune"),
            QStringLiteral("synthetic attempt %1").arg(n), &error, rng.bounded(5.0));
        if (e.id == 0) {
            err << "autokernel-gen-run: " << error << '\n';
            return 1;
        }
        const quint32 roll = rng.bounded(100);
        const ExperimentStatus status = roll < 25 ? ExperimentStatus::Kept
            : roll < 75                           ? ExperimentStatus::Reverted
            : roll < 93                           ? ExperimentStatus::Failed
            : roll < 97                           ? ExperimentStatus::Crashed
                                                  : ExperimentStatus::Timeout;
        Metrics m;
        if (status == ExperimentStatus::Kept)
            best[ki] *= 0.97;
        if (status == ExperimentStatus::Kept || status == ExperimentStatus::Reverted) {
            m.latencyUs = status == ExperimentStatus::Kept ? best[ki] : best[ki] * (1.0 + rng.bounded(0.5));
            m.refLatencyUs = 100;
            m.speedup = m.refLatencyUs / m.latencyUs;
            m.tflops = 50 * m.speedup;
            m.pctPeak = std::min(99.0, 20 * m.speedup);
            m.noisePct = 0.5;
            m.correct = true;
        }
        if (!store->finishExperiment(e.id, status, m,
                status == ExperimentStatus::Failed ? QStringLiteral("output mismatch") : QString(), &error)) {
            err << "autokernel-gen-run: " << error << '\n';
            return 1;
        }
    }
    QTextStream(stdout) << "wrote " << kernels << " kernels and " << experiments << " experiments in "
                        << timer.elapsed() / 1000.0 << " s\n";
    return 0;
}
