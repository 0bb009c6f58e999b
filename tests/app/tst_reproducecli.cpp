// `autokernel-cli reproduce DIR` (#43 item 4): an exported package re-measured on this machine and
// compared with what it recorded; a kernel file changed since export is not the one measured.
#include "testfixtures.h"
#include "testregistry.h"

#include <QFile>
#include <QTemporaryDir>

using namespace ak;

namespace {

// A package as export writes it, for the CPU starter softmax: its recorded distribution is a real
// re-check, marked offered (the verdict is test_recheck.py's business; this is the command's).
const char *kMakePackage = R"(
import hashlib, os, shutil, sys
sys.path.insert(0, os.path.join(sys.argv[1], "agent", "python"))
from harness import recheck
from modelplug import export
root, out = sys.argv[2], sys.argv[3]
src = os.path.join(sys.argv[1], "agent", "python", "harness", "starters", "cpu", "softmax.py")
kdir = os.path.join(root, "kernels", "01-softmax")
os.makedirs(kdir)
shutil.copyfile(src, os.path.join(kdir, "kernel.py"))
rc = dict(recheck.run({"kernel_path": src, "device": "cpu", "pairs": 10}), offered=True)
sha = hashlib.sha256(open(src, "rb").read()).hexdigest()
v = {"format": "autokernel-verification", "device": "cpu", "dtype": "float32", "seeds": [1],
     "final_set": ["01-softmax"], "timings": {}, "parity": {"ok": True},
     "kernels": [{"kernel": "01-softmax", "op_type": "softmax", "sites": ["m"], "blob_sha256": sha, "recheck": rc}]}
os.makedirs(out)
export.handle({"run_dir": root, "out_dir": out, "package": "pk", "verification": v})
)";

} // namespace

class ReproduceCliTest : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;

    static test::CliResult reproduce(const QStringList &args)
    {
        return test::runProgram(test::cliPath(),
            QStringList { QStringLiteral("reproduce") } + args
                + QStringList { QStringLiteral("--python"), test::testPython() },
            600000);
    }

private Q_SLOTS:
    void aDirectoryWithoutAPackageIsAnErrorNamingWhy()
    {
        const test::CliResult r = reproduce({ m_dir.path() });
        QCOMPARE(r.exitCode, 2);
        QVERIFY2(r.err.contains(QStringLiteral("no package with provenance.json")), qPrintable(r.err));
    }

    void aPackageIsReMeasuredAndATamperedKernelCaught()
    {
        const QString out = m_dir.filePath(QStringLiteral("export"));
        const test::CliResult made = test::runProgram(test::testPython(),
            { QStringLiteral("-c"), QString::fromUtf8(kMakePackage), QStringLiteral(AUTOKERNEL_SOURCE_DIR),
                m_dir.filePath(QStringLiteral("run")), out },
            600000);
        QVERIFY2(made.exitCode == 0, qPrintable(made.err));
        test::CliResult r = reproduce({ out, QStringLiteral("--pairs"), QStringLiteral("10") });
        // Agreement depends on this machine's noise; what is asserted is that it was measured and said.
        QVERIFY2(r.exitCode == 0 || r.exitCode == 1, qPrintable(r.out + r.err));
        QVERIFY2(r.out.contains(QStringLiteral("device: recorded ")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("01-softmax: agrees"))
                || r.out.contains(QStringLiteral("01-softmax: differs")),
            qPrintable(r.out));
        QCOMPARE(r.exitCode == 0, r.out.contains(QStringLiteral("reproduced: every kernel agrees")));

        QFile kernel(out + QStringLiteral("/pk/kernels/01_softmax.py"));
        QVERIFY(kernel.open(QIODevice::Append));
        kernel.write("\n# edited after export\n");
        kernel.close();
        r = reproduce({ out });
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.out.contains(QStringLiteral("changed since export")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("NOT reproduced")));
    }
};

AK_TEST_CLASS(ReproduceCliTest)
#include "tst_reproducecli.moc"
