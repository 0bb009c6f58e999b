#include "kernelstaticcheck.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QThread>

#include <atomic>
#include <memory>
#include <vector>

using namespace ak;

namespace {

const QByteArray kSoftmax
    = QByteArrayLiteral("# softmax starter\n"
                        "import torch\n"
                        "KERNEL_TYPE = \"softmax\"\n"
                        "TEST_SIZES = [(4096, 4096)]\n"
                        "BLOCK_ROWS = 4   # rows per program\n"
                        "NUM_WARPS: int = 8\n"
                        "SCALE = -0.5\n"
                        "_PRIVATE = 3\n"
                        "lower = 7\n"
                        "FLAG = True\n"
                        "TWICE = 1\n"
                        "TWICE = 2\n"
                        "TUNE_SPACE = {\"BLOCK_ROWS\": [1, 2, 4, 8], \"NUM_WARPS\": (4, 8, 16)}\n"
                        "\n"
                        "def kernel_fn(x, *, dim=-1):\n"
                        "    return torch.softmax(x * SCALE, dim)\n");

const TunableConstant *find(const KernelStaticInfo &info, const char *name)
{
    for (const TunableConstant &c : info.constants)
        if (c.name == QLatin1String(name))
            return &c;
    return nullptr;
}

} // namespace

class KernelStaticCheckTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    // First, so the interpreter is started by whichever of several racing threads gets there first.
    void concurrentCallsFromThreads()
    {
        constexpr int kThreads = 6;
        constexpr int kCalls = 40;
        std::atomic<int> failures { 0 };
        std::vector<std::unique_ptr<QThread>> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back(QThread::create([t, &failures]() {
                for (int i = 0; i < kCalls; ++i) {
                    const QByteArray src = "KERNEL_TYPE = \"matmul\"\nBLOCK_M = "
                        + QByteArray::number(t * 1000 + i) + "\ndef kernel_fn(A, B):\n    return A @ B\n";
                    const KernelStaticInfo info = checkKernelSource(src);
                    if (!info.ok || info.constants.size() != 1 || info.constants[0].value != t * 1000 + i)
                        ++failures;
                    QString error;
                    const QByteArray out
                        = rewriteConstants(src, { { QStringLiteral("BLOCK_M"), 64 } }, &error);
                    if (!out.contains("BLOCK_M = 64\n"))
                        ++failures;
                }
            }));
        }
        for (auto &t : threads)
            t->start();
        for (auto &t : threads)
            QVERIFY(t->wait(120000));
        QCOMPARE(failures.load(), 0);
    }

    void interpreterStarts()
    {
        // Fails loudly (with the reason) if the embedded interpreter cannot start on this machine.
        QVERIFY2(embeddedPythonStatus().startsWith(QLatin1String("3.")), qPrintable(embeddedPythonStatus()));
    }

    void readsContractAndConstants()
    {
        const KernelStaticInfo info = checkKernelSource(kSoftmax, QStringLiteral("kernel.py"));
        QVERIFY2(info.ok, qPrintable(info.error));
        QCOMPARE(info.kernelType, QStringLiteral("softmax"));
        QCOMPARE(info.kernelFnArgs, QStringList({ QStringLiteral("x"), QStringLiteral("dim") }));
        QStringList names;
        for (const TunableConstant &c : info.constants)
            names << c.name;
        // Not tunable: contract names, private and lower-case names, bools, names bound twice.
        QCOMPARE(names,
            QStringList(
                { QStringLiteral("BLOCK_ROWS"), QStringLiteral("NUM_WARPS"), QStringLiteral("SCALE") }));
        const TunableConstant *rows = find(info, "BLOCK_ROWS");
        QCOMPARE(rows->value, 4.0);
        QVERIFY(rows->isInteger);
        QCOMPARE(rows->line, 5);
        QCOMPARE(rows->candidates, QVector<double>({ 1, 2, 4, 8 }));
        QCOMPARE(find(info, "NUM_WARPS")->candidates, QVector<double>({ 4, 8, 16 }));
        QCOMPARE(find(info, "NUM_WARPS")->line, 6);
        const TunableConstant *scale = find(info, "SCALE");
        QCOMPARE(scale->value, -0.5);
        QVERIFY(!scale->isInteger);
        QVERIFY(scale->candidates.isEmpty());
    }

    void syntaxErrorNamesLine()
    {
        const QByteArray src
            = "KERNEL_TYPE = \"reduce\"\n\ndef kernel_fn(x):\n    return x.sum(-1\n\nY = 2\n";
        const KernelStaticInfo info = checkKernelSource(src, QStringLiteral("kernels/09-reduce/kernel.py"));
        QVERIFY(!info.ok);
        QCOMPARE(info.errorLine, 4);
        QVERIFY2(
            info.error.startsWith(QLatin1String("kernels/09-reduce/kernel.py:4: ")), qPrintable(info.error));
    }

    void missingKernelFn()
    {
        const KernelStaticInfo info
            = checkKernelSource("KERNEL_TYPE = \"gelu\"\ndef kernel(x):\n    return x\n");
        QVERIFY(!info.ok);
        QVERIFY2(info.error.contains(QLatin1String("kernel_fn is missing")), qPrintable(info.error));
        const KernelStaticInfo lambda
            = checkKernelSource("KERNEL_TYPE = \"gelu\"\nkernel_fn = lambda x: x\n");
        QVERIFY(!lambda.ok);
        QCOMPARE(lambda.errorLine, 2);
    }

    void missingOrNonLiteralKernelType()
    {
        QVERIFY(checkKernelSource("def kernel_fn(x):\n    return x\n")
                    .error.contains(QLatin1String("KERNEL_TYPE")));
        const KernelStaticInfo info
            = checkKernelSource("T = 'a'\nKERNEL_TYPE = T\ndef kernel_fn(x):\n    pass\n");
        QVERIFY(!info.ok);
        QCOMPARE(info.errorLine, 2);
    }

    void badTuneSpace()
    {
        const QByteArray base = "KERNEL_TYPE = \"reduce\"\nBLOCK = 64\ndef kernel_fn(x):\n    pass\n";
        const KernelStaticInfo unknown = checkKernelSource(base + "TUNE_SPACE = {\"WARPS\": [4]}\n");
        QVERIFY(!unknown.ok);
        QVERIFY2(unknown.error.contains(QLatin1String("WARPS")), qPrintable(unknown.error));
        QCOMPARE(unknown.errorLine, 5);
        QVERIFY(!checkKernelSource(base + "TUNE_SPACE = {\"BLOCK\": [32.5]}\n").ok);
        QVERIFY(!checkKernelSource(base + "TUNE_SPACE = {\"BLOCK\": range(4)}\n").ok);
        QVERIFY(!checkKernelSource(base + "TUNE_SPACE = {\"BLOCK\": []}\n").ok);
    }

    void validateProposalRules()
    {
        const KernelStaticInfo old = checkKernelSource(kSoftmax);
        QVERIFY(validateProposal(old, old).isEmpty());
        QByteArray changedType = kSoftmax;
        changedType.replace("\"softmax\"", "\"reduce\"");
        const QString typeError = validateProposal(old, checkKernelSource(changedType));
        QVERIFY2(typeError.contains(QLatin1String("KERNEL_TYPE")), qPrintable(typeError));
        QByteArray renamedArg = kSoftmax;
        renamedArg.replace("def kernel_fn(x, *, dim=-1)", "def kernel_fn(inp, *, dim=-1)");
        QVERIFY(validateProposal(old, checkKernelSource(renamedArg)).contains(QLatin1String("kernel_fn")));
        QByteArray noFn = kSoftmax;
        noFn.replace("def kernel_fn", "def other_fn");
        QVERIFY(
            validateProposal(old, checkKernelSource(noFn)).contains(QLatin1String("kernel_fn is missing")));
        QByteArray reformatted = kSoftmax;
        reformatted.replace("TEST_SIZES = [(4096, 4096)]", "TEST_SIZES = [ ( 4096,4096 ), ]");
        QVERIFY(validateProposal(old, checkKernelSource(reformatted)).isEmpty());
        QByteArray fewerSizes = kSoftmax;
        fewerSizes.replace("TEST_SIZES = [(4096, 4096)]", "TEST_SIZES = [(4096, 4095)]");
        QVERIFY(validateProposal(old, checkKernelSource(fewerSizes)).contains(QLatin1String("TEST_SIZES")));
        QByteArray looser = kSoftmax;
        looser.replace("import torch\n", "import torch\nTOLERANCES = {\"bfloat16\": {\"atol\": 1.0}}\n");
        QVERIFY(validateProposal(old, checkKernelSource(looser)).contains(QLatin1String("TOLERANCES")));
        QByteArray broken = kSoftmax + "def (:\n";
        QVERIFY(validateProposal(old, checkKernelSource(broken)).contains(QLatin1String("kernel.py:17")));
    }

    void rewriteRoundTrip()
    {
        QByteArray crlf = kSoftmax;
        crlf.replace("\n", "\r\n");
        crlf.prepend("# caf\xc3\xa9 \xe2\x80\x94 non-ASCII before the constants\r\n");
        QString error;
        const QMap<QString, double> values { { QStringLiteral("BLOCK_ROWS"), 16 },
            { QStringLiteral("SCALE"), 0.125 }, { QStringLiteral("NUM_WARPS"), 4 } };
        const QByteArray out = rewriteConstants(crlf, values, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        // Exactly the three literals changed, every other byte (comments, CRLF, annotation) kept.
        QByteArray expected = crlf;
        expected.replace("BLOCK_ROWS = 4   #", "BLOCK_ROWS = 16   #");
        expected.replace("NUM_WARPS: int = 8", "NUM_WARPS: int = 4");
        expected.replace("SCALE = -0.5", "SCALE = 0.125");
        QCOMPARE(out, expected);
        const KernelStaticInfo info = checkKernelSource(out);
        QVERIFY2(info.ok, qPrintable(info.error));
        QCOMPARE(find(info, "BLOCK_ROWS")->value, 16.0);
        QCOMPARE(find(info, "SCALE")->value, 0.125);
        QCOMPARE(find(info, "NUM_WARPS")->value, 4.0);
        // And back again: the original bytes.
        const QByteArray back = rewriteConstants(out,
            { { QStringLiteral("BLOCK_ROWS"), 4 }, { QStringLiteral("SCALE"), -0.5 },
                { QStringLiteral("NUM_WARPS"), 8 } },
            &error);
        QCOMPARE(back, crlf);
    }

    void rewriteRejectsBadRequests()
    {
        QString error;
        QVERIFY(rewriteConstants(kSoftmax, { { QStringLiteral("TWICE"), 3 } }, &error).isEmpty());
        QVERIFY2(error.contains(QLatin1String("TWICE")), qPrintable(error));
        QVERIFY(rewriteConstants(kSoftmax, { { QStringLiteral("BLOCK_ROWS"), 2.5 } }, &error).isEmpty());
        QVERIFY2(error.contains(QLatin1String("integer")), qPrintable(error));
        QVERIFY(rewriteConstants("X = (\n", { { QStringLiteral("X"), 1 } }, &error).isEmpty());
        QVERIFY(!error.isEmpty());
    }

    void importTimeCodeIsNeverRun()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString marker = dir.filePath(QStringLiteral("executed"));
        const QByteArray path = marker.toUtf8();
        const QByteArray src = "import os\n"
                               "open("
            + QByteArray("'") + path
            + "', 'w').write('ran')\n"
              "os.makedirs('"
            + path
            + "-dir')\n"
              "KERNEL_TYPE = \"reduce\"\n"
              "BLOCK = 1024\n"
              "def kernel_fn(x):\n"
              "    return x.sum(-1)\n";
        const KernelStaticInfo info = checkKernelSource(src);
        QVERIFY2(info.ok, qPrintable(info.error));
        QString error;
        QVERIFY(!rewriteConstants(src, { { QStringLiteral("BLOCK"), 512 } }, &error).isEmpty());
        QVERIFY(!QFile::exists(marker));
        QVERIFY(!QDir(marker + QStringLiteral("-dir")).exists());
        // The same source, executed by a real interpreter, does create the file: the test is live.
        QProcess python;
        python.start(QString::fromUtf8(qgetenv("AUTOKERNEL_TEST_PYTHON")).isEmpty()
                ? QStringLiteral("python3")
                : QString::fromUtf8(qgetenv("AUTOKERNEL_TEST_PYTHON")),
            { QStringLiteral("-c"), QString::fromUtf8(src) });
        QVERIFY(python.waitForFinished(30000));
        QVERIFY(QFile::exists(marker));
    }
};

AK_TEST_CLASS(KernelStaticCheckTest)
#include "tst_kernelstaticcheck.moc"
