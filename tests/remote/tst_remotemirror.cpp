// The mirror of a remote run (core/runmirror) against a server that has no rsync on its PATH, only
// the one of the autokernel-cli bundle beside its autokernel-cli (packaging/bundle-cli.sh): the
// window's copy of the run still works, through `--rsync-path`, and with neither the failure says
// which command is missing. The far side is the test's private sshd with a PATH of a few tools.
#include "remoterun.h"
#include "runmirror.h"
#include "sshserver.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace ak;

namespace {

bool writeFile(const QString &path, const QByteArray &data, bool executable = false)
{
    QDir().mkpath(path.section(QLatin1Char('/'), 0, -2));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly) || f.write(data) != data.size())
        return false;
    f.close();
    return !executable || f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
}

QByteArray readFile(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

} // namespace

class RemoteMirrorTest : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    test::SshServer m_ssh;

    // The address of `dir` behind the test's sshd, its autokernel-cli named by `cli`.
    RemoteRun remote(const QString &dir, const QString &cli) const
    {
        QStringList ssh = m_ssh.launcher().split(QLatin1Char(' '));
        const QString host = ssh.takeLast();
        RemoteRun run = RemoteRun::parse(QStringLiteral("ssh://%1%2").arg(host, dir), nullptr);
        run.setSsh(ssh);
        // As an unpacked bundle is named in the dialog.
        run.setRemoteCli({ QStringLiteral("env"),
            QStringLiteral("LD_LIBRARY_PATH=%1/lib").arg(cli.section(QLatin1Char('/'), 0, -3)), cli });
        return run;
    }

    // A small run directory: what the mirror copies is files, a git store's fan-out included.
    bool makeRun(const QString &dir)
    {
        return writeFile(dir + QStringLiteral("/run.json"), "{\"model\": \"tiny.py\"}\n")
            && writeFile(dir + QStringLiteral("/log.jsonl"), "{\"id\": 1}\n")
            && writeFile(dir + QStringLiteral("/.git/objects/ab/cdef0123"), "object\n");
    }

    // Starts the mirror and waits until its first transfer ended, without a failure.
    static void firstTransfer(RunMirror &mirror, const QSignalSpy &failed)
    {
        QSignalSpy synced(&mirror, &RunMirror::synced);
        mirror.start();
        QTRY_VERIFY2_WITH_TIMEOUT(synced.count() >= 1 || failed.count() >= 1, "no transfer ended", 30000);
        QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
    }

private Q_SLOTS:
    void initTestCase()
    {
        if (test::SshServer::sshdPath().isEmpty())
            AK_SKIP_WITHOUT_SERVICE(QStringLiteral(
                "openssh-server is not installed (packaging/setup-deps.sh installs it; CI has it)"));
        if (QStandardPaths::findExecutable(QStringLiteral("rsync")).isEmpty())
            AK_SKIP_WITHOUT_SERVICE(
                QStringLiteral("rsync is not installed (packaging/setup-deps.sh installs it; CI has it)"));
        QVERIFY(m_dir.isValid());
        // The far side's PATH: what the mirror's lister runs, and no rsync.
        const QString tools = m_dir.filePath(QStringLiteral("far-tools"));
        QVERIFY(QDir().mkpath(tools));
        for (const char *tool : { "sh", "date", "find", "sleep" }) {
            const QString path = QStandardPaths::findExecutable(QLatin1String(tool));
            QVERIFY2(!path.isEmpty(), tool);
            QVERIFY(QFile::link(path, tools + QLatin1Char('/') + QLatin1String(tool)));
        }
        m_ssh.setFarPath(tools);
        QString error;
        QVERIFY2(m_ssh.start(&error), qPrintable(error));
        // The premise: a plain `rsync` there is not found.
        QString out;
        QVERIFY2(m_ssh.runThere(QStringLiteral("command -v rsync"), &out) != 0, qPrintable(out));
        QVERIFY2(m_ssh.runThere(QStringLiteral("command -v find"), &out) == 0, qPrintable(out));
    }

    // rsync beside the far side's autokernel-cli (as the bundle has it) makes the first copy and
    // fetches what changes after it.
    void withoutRsyncThereTheOneBesideTheCliIsUsed()
    {
        const QString run = m_dir.filePath(QStringLiteral("far run")); // a name that needs quoting
        QVERIFY(makeRun(run));
        // The bundle's layout: bin/autokernel-cli and bin/rsync. This rsync notes each use, so the
        // test knows which one ran.
        const QString bin = m_dir.filePath(QStringLiteral("ak bundle/bin"));
        const QString used = m_dir.filePath(QStringLiteral("bundle-rsync-used"));
        QVERIFY(writeFile(bin + QStringLiteral("/autokernel-cli"), "#!/bin/sh\nexit 1\n", true));
        QVERIFY(writeFile(bin + QStringLiteral("/rsync"),
            QStringLiteral("#!/bin/sh\necho used >> '%1'\nexec '%2' \"$@\"\n")
                .arg(used, QStandardPaths::findExecutable(QStringLiteral("rsync")))
                .toUtf8(),
            true));

        RunMirror mirror(remote(run, bin + QStringLiteral("/autokernel-cli")));
        QSignalSpy failed(&mirror, &RunMirror::failed);
        const QString local = mirror.localDir();
        auto cleanUp = qScopeGuard([&] {
            mirror.stop();
            QDir(local).removeRecursively();
        });
        firstTransfer(mirror, failed);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(readFile(local + QStringLiteral("/run.json")), readFile(run + QStringLiteral("/run.json")));
        QCOMPARE(readFile(local + QStringLiteral("/.git/objects/ab/cdef0123")), QByteArray("object\n"));

        // Live: a line the writer appends arrives through the lister's names and a second transfer.
        QVERIFY(writeFile(run + QStringLiteral("/log.jsonl"), "{\"id\": 1}\n{\"id\": 2}\n"));
        QTRY_COMPARE_WITH_TIMEOUT(
            readFile(local + QStringLiteral("/log.jsonl")), QByteArray("{\"id\": 1}\n{\"id\": 2}\n"), 15000);
        QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
        QVERIFY2(readFile(used).count("used") >= 2, readFile(used).constData()); // both transfers
    }

    // The real thing: packaging/bundle-cli.sh's archive unpacked there, named as docs/remote.md says;
    // its bin/rsync (a wrapper that finds its libraries in the bundle) serves the mirror.
    void theBundlesRsyncServesTheMirror()
    {
        const QString source = qEnvironmentVariable("AUTOKERNEL_SOURCE_DIR");
        if (source.isEmpty() || test::cliPath().isEmpty())
            QSKIP("AUTOKERNEL_SOURCE_DIR and AUTOKERNEL_CLI are not set (ctest sets them)");
        const QString build = QFileInfo(test::cliPath()).absoluteDir().filePath(QStringLiteral(".."));
        const QString archive = m_dir.filePath(QStringLiteral("bundle/autokernel-cli.tar.xz"));
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XZ_OPT"), QStringLiteral("-0 -T0")); // packed to be unpacked at once
        test::CliResult r = test::runProgram(QStringLiteral("bash"),
            { source + QStringLiteral("/packaging/bundle-cli.sh"), build, archive }, 120000, env);
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString far = m_dir.filePath(QStringLiteral("bundle/ak"));
        QVERIFY(QDir().mkpath(far));
        r = test::runProgram(
            QStringLiteral("tar"), { QStringLiteral("-C"), far, QStringLiteral("-xJf"), archive });
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        QVERIFY(QFileInfo(far + QStringLiteral("/bin/rsync")).isExecutable());

        const QString run = m_dir.filePath(QStringLiteral("bundle-run"));
        QVERIFY(makeRun(run));
        RunMirror mirror(remote(run, far + QStringLiteral("/bin/autokernel-cli")));
        QSignalSpy failed(&mirror, &RunMirror::failed);
        const QString local = mirror.localDir();
        auto cleanUp = qScopeGuard([&] {
            mirror.stop();
            QDir(local).removeRecursively();
        });
        firstTransfer(mirror, failed);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(
            readFile(local + QStringLiteral("/log.jsonl")), readFile(run + QStringLiteral("/log.jsonl")));
        QCOMPARE(readFile(local + QStringLiteral("/.git/objects/ab/cdef0123")), QByteArray("object\n"));
    }

    // No rsync on the PATH and none beside the CLI: the mirror says a command is missing there.
    void withNeitherTheMirrorSaysWhatIsMissing()
    {
        const QString run = m_dir.filePath(QStringLiteral("run-without-rsync"));
        QVERIFY(makeRun(run));
        RunMirror mirror(remote(run, m_dir.filePath(QStringLiteral("empty/bin/autokernel-cli"))));
        QSignalSpy failed(&mirror, &RunMirror::failed);
        mirror.start();
        const QString local = mirror.localDir();
        auto cleanUp = qScopeGuard([&] {
            mirror.stop();
            QDir(local).removeRecursively();
        });
        QTRY_VERIFY_WITH_TIMEOUT(failed.count() >= 1, 30000);
        const QString error = failed.first().at(0).toString();
        QVERIFY2(error.contains(QStringLiteral("a command is missing")), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("rsync")), qPrintable(error));
        QVERIFY(failed.first().at(1).toBool()); // before any copy was made
    }
};

AK_TEST_CLASS(RemoteMirrorTest)
#include "tst_remotemirror.moc"
