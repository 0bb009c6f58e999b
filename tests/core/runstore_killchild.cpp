// Child of RunStoreKillTest: opens (and so repairs) a run and records experiments as fast as it can
// until the test kills it with SIGKILL. After each finishExperiment returns it prints
// "F <id> <status>" and flushes, so the parent knows which experiments must survive. Every fourth
// experiment it also changes the move-on rules and prints "R <max_consecutive_reverts>".
#include "runstore.h"

#include <QCoreApplication>
#include <QRandomGenerator>

#include <cstdio>

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    if (argc < 2) {
        std::fprintf(stderr, "usage: runstore_killchild RUN_DIR\n");
        return 2;
    }
    QString error;
    auto store = ak::RunStore::open(QString::fromLocal8Bit(argv[1]), &error);
    if (!store) {
        std::fprintf(stderr, "open: %s\n", qPrintable(error));
        return 1;
    }
    std::printf("O\n");
    std::fflush(stdout);
    QRandomGenerator rng(quint32(QCoreApplication::applicationPid()));
    const QStringList kernels
        = { QStringLiteral("01-matmul"), QStringLiteral("02-softmax"), QStringLiteral("03-rmsnorm") };
    const ak::ExperimentStatus outcomes[] = { ak::ExperimentStatus::Kept, ak::ExperimentStatus::Reverted,
        ak::ExperimentStatus::Failed, ak::ExperimentStatus::Timeout };
    for (int n = 0;; ++n) {
        const QString kernel = kernels[int(rng.bounded(kernels.size()))];
        const QByteArray code = "BLOCK = " + QByteArray::number(rng.bounded(1 << 20)) + "\n";
        const ak::Experiment e = store->beginExperiment(
            kernel, code, QStringLiteral("tune"), QStringLiteral("try %1").arg(n), &error);
        if (e.id == 0) {
            std::fprintf(stderr, "begin: %s\n", qPrintable(error));
            return 1;
        }
        const ak::ExperimentStatus status = outcomes[rng.bounded(4)];
        ak::Metrics m;
        m.latencyUs = 10 + rng.bounded(100);
        m.correct = status != ak::ExperimentStatus::Failed;
        if (!store->finishExperiment(e.id, status, m, QString(), &error)) {
            std::fprintf(stderr, "finish: %s\n", qPrintable(error));
            return 1;
        }
        std::printf("F %d %s\n", e.id, qPrintable(ak::statusName(status)));
        std::fflush(stdout);
        if (n % 4 == 3) {
            ak::MoveOnRules rules = store->state().config.moveOn;
            rules.maxConsecutiveReverts = 1 + rules.maxConsecutiveReverts % 50; // always a change
            if (!store->setMoveOnRules(rules, &error)) {
                std::fprintf(stderr, "rules: %s\n", qPrintable(error));
                return 1;
            }
            std::printf("R %d\n", rules.maxConsecutiveReverts);
            std::fflush(stdout);
        }
    }
}
