// ssh:// addresses of remote runs (core/remoterun): what parses, what is refused with its reason,
// and the ssh and rsync commands built from them.
#include "remoterun.h"
#include "runmirror.h"
#include "shellwords.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace ak;

class RemoteRunTest : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void addresses()
    {
        QString error;
        RemoteRun r = RemoteRun::parse(QStringLiteral("ssh://me@gpu1:2222/srv/runs/llama/"), &error);
        QVERIFY2(r.isValid(), qPrintable(error));
        QCOMPARE(r.host(), QStringLiteral("me@gpu1"));
        QCOMPARE(r.port(), 2222);
        QCOMPARE(r.path(), QStringLiteral("/srv/runs/llama"));
        QCOMPARE(r.url(), QStringLiteral("ssh://me@gpu1:2222/srv/runs/llama"));
        // /~/ is the remote home: ssh starts there, so the path stays relative.
        r = RemoteRun::parse(QStringLiteral("ssh://gpu1/~/runs/llama"), &error);
        QVERIFY(r.isValid());
        QCOMPARE(r.path(), QStringLiteral("runs/llama"));
        QCOMPARE(r.port(), 0);
        QCOMPARE(r.url(), QStringLiteral("ssh://gpu1/~/runs/llama"));
        QCOMPARE(r.display(), QStringLiteral("gpu1:runs/llama"));

        for (const char *bad :
            { "gpu1:/runs/x", "ssh:///runs/x", "ssh://gpu1", "ssh://gpu1/", "ssh://gpu1/~/" }) {
            error.clear();
            QVERIFY2(!RemoteRun::parse(QLatin1String(bad), &error).isValid(), bad);
            QVERIFY2(error.startsWith(QLatin1String(bad)), qPrintable(error)); // names what was typed
        }
    }

    void commands()
    {
        RemoteRun r = RemoteRun::parse(QStringLiteral("ssh://gpu1:2222/runs/my run"), nullptr);
        QVERIFY(r.isValid());
        r.setSsh({ QStringLiteral("ssh"), QStringLiteral("-F"), QStringLiteral("/etc/lab config") });
        r.setRemoteCli({ QStringLiteral("/opt/ak/bin/autokernel-cli") });
        const QStringList t = r.transport();
        QCOMPARE(t.mid(0, 3),
            QStringList({ QStringLiteral("ssh"), QStringLiteral("-F"), QStringLiteral("/etc/lab config") }));
        QVERIFY(t.contains(QStringLiteral("BatchMode=yes")));
        QVERIFY(t.contains(QStringLiteral("ControlMaster=auto")));
        QCOMPARE(t.at(t.indexOf(QStringLiteral("-p")) + 1), QStringLiteral("2222"));
        // The remote shell gets one string that splits back into exactly the CLI's words.
        const QStringList cmd
            = r.cliCommand({ QStringLiteral("pin"), r.path(), QStringLiteral("01-matmul") });
        QCOMPARE(cmd.at(cmd.size() - 2), QStringLiteral("gpu1"));
        QChar unclosed;
        QCOMPARE(shellwords::split(cmd.last(), &unclosed),
            QStringList({ QStringLiteral("/opt/ak/bin/autokernel-cli"), QStringLiteral("pin"),
                QStringLiteral("/runs/my run"), QStringLiteral("01-matmul") }));
        // A user who manages connection sharing keeps it: no second ControlPath.
        r.setSsh({ QStringLiteral("ssh"), QStringLiteral("-o"), QStringLiteral("ControlPath=/tmp/mine") });
        QCOMPARE(r.transport().filter(QStringLiteral("ControlPath")).size(), 1);

        // rsync copies the folder's contents (trailing /) over the same transport, into the cache.
        const RunMirror mirror(r);
        const QStringList pass = mirror.fullCommand();
        QCOMPARE(pass.first(), QStringLiteral("rsync"));
        QVERIFY(pass.contains(QStringLiteral("--delete")));
        QCOMPARE(pass.at(pass.size() - 2), QStringLiteral("gpu1:/runs/my run/"));
        QCOMPARE(pass.last(), r.cacheDir() + QLatin1Char('/'));
        QCOMPARE(
            shellwords::split(pass.at(pass.indexOf(QStringLiteral("-e")) + 1), &unclosed), r.transport());
        // The lister is one remote shell line that changes into the run (quoted) and loops there.
        const QStringList lister = mirror.listerCommand();
        QCOMPARE(lister.at(lister.size() - 2), QStringLiteral("gpu1"));
        const QStringList script = shellwords::split(lister.last(), &unclosed);
        QCOMPARE(script.mid(0, 2), QStringList({ QStringLiteral("sh"), QStringLiteral("-c") }));
        QVERIFY2(
            script.at(2).startsWith(QStringLiteral("cd '/runs/my run' || exit 3")), qPrintable(script.at(2)));
        // The CLI named by its path: rsync there is the server's own, else the one beside that CLI.
        const QStringList far = pass.filter(QStringLiteral("--rsync-path="));
        QCOMPARE(far.size(), 1);
        QCOMPARE(far.first(), QStringLiteral("--rsync-path=") + r.remoteRsync());
        QVERIFY2(r.remoteRsync().contains(QStringLiteral("/opt/ak/bin/rsync")), qPrintable(r.remoteRsync()));
        QVERIFY(mirror.fetchCommand().contains(far.first()));
        QVERIFY(mirror.fetchCommand().contains(QStringLiteral("--files-from=-")));
        QVERIFY(!mirror.fetchCommand().contains(QStringLiteral("--delete")));
        // A CLI found on the remote PATH: so is the bundle's rsync, and rsync is called plainly.
        r.setRemoteCli({ QStringLiteral("autokernel-cli") });
        QVERIFY(RunMirror(r).fullCommand().filter(QStringLiteral("--rsync-path")).isEmpty());
        // One cache folder per address.
        QVERIFY(r.cacheDir()
            != RemoteRun::parse(QStringLiteral("ssh://gpu2:2222/runs/my run"), nullptr).cacheDir());
    }

    // Where the remote autokernel-cli lives, from the words that run it.
    void remoteCliDir()
    {
        RemoteRun r = RemoteRun::parse(QStringLiteral("ssh://gpu1/runs/x"), nullptr);
        const QList<QPair<QStringList, QString>> cases {
            { { QStringLiteral("autokernel-cli") }, QString() },
            { { QStringLiteral("/opt/ak/bin/autokernel-cli"), QStringLiteral("--verbose") },
                QStringLiteral("/opt/ak/bin") },
            { { QStringLiteral("env"), QStringLiteral("LD_LIBRARY_PATH=/opt/ak/lib"),
                  QStringLiteral("/opt/ak/bin/autokernel-cli") },
                QStringLiteral("/opt/ak/bin") },
            { { QStringLiteral("/usr/bin/env"), QStringLiteral("-i"), QStringLiteral("A=1"),
                  QStringLiteral("ak/bin/autokernel-cli") },
                QStringLiteral("ak/bin") },
            { { QStringLiteral("~/ak/bin/autokernel-cli") }, QStringLiteral("ak/bin") },
            { { QStringLiteral("./autokernel-cli") }, QStringLiteral(".") },
        };
        for (const auto &[words, dir] : cases) {
            r.setRemoteCli(words);
            QCOMPARE(r.remoteCliDir(), dir);
            QCOMPARE(r.remoteRsync().isEmpty(), dir.isEmpty());
        }
    }

    // The --rsync-path expression run as the far side's shell runs it (rsync's arguments appended):
    // the server's own rsync when its PATH has one, else the one beside the CLI, even in a folder
    // whose name needs quoting; neither is a missing command (127), which the mirror reports.
    void remoteRsyncRunsTheFallback()
    {
        QTemporaryDir tmp;
        QVERIFY(tmp.isValid());
        const QString bundle = tmp.filePath(QStringLiteral("an ak's $(bundle)/bin"));
        const QString own = tmp.filePath(QStringLiteral("own"));
        const QString tools = tmp.filePath(QStringLiteral("tools")); // sh and nothing else
        QVERIFY(QDir().mkpath(bundle) && QDir().mkpath(own) && QDir().mkpath(tools));
        QVERIFY(QFile::link(QStringLiteral("/bin/sh"), tools + QStringLiteral("/sh")));
        auto script = [](const QString &path, const QByteArray &name) {
            QFile f(path);
            if (!f.open(QIODevice::WriteOnly))
                return false;
            f.write("#!/bin/sh\necho " + name + " \"$@\"\n");
            f.close();
            return f.setPermissions(f.permissions() | QFileDevice::ExeOwner);
        };
        QVERIFY(script(bundle + QStringLiteral("/rsync"), "bundle"));
        QVERIFY(script(own + QStringLiteral("/rsync"), "own"));

        RemoteRun r = RemoteRun::parse(QStringLiteral("ssh://gpu1/runs/x"), nullptr);
        r.setRemoteCli({ QStringLiteral("env"), QStringLiteral("LD_LIBRARY_PATH=/x"),
            bundle + QStringLiteral("/autokernel-cli") });
        auto farSide = [&](const QString &path, QString *out) {
            QProcess sh;
            QProcessEnvironment env;
            env.insert(QStringLiteral("PATH"), path);
            sh.setProcessEnvironment(env);
            sh.start(QStringLiteral("/bin/sh"),
                { QStringLiteral("-c"),
                    r.remoteRsync() + QStringLiteral(" --server -e.Lsf . '/runs/my run/'") });
            if (!sh.waitForFinished(10000))
                return -1;
            *out = QString::fromUtf8(sh.readAllStandardOutput()).trimmed();
            return sh.exitCode();
        };
        QString out;
        QCOMPARE(farSide(tools, &out), 0);
        QCOMPARE(out, QStringLiteral("bundle --server -e.Lsf . /runs/my run/"));
        QCOMPARE(farSide(own + QLatin1Char(':') + tools, &out), 0);
        QCOMPARE(out, QStringLiteral("own --server -e.Lsf . /runs/my run/"));
        r.setRemoteCli({ tmp.filePath(QStringLiteral("elsewhere/autokernel-cli")) });
        QCOMPARE(farSide(tools, &out), 127);
    }
};

AK_TEST_CLASS(RemoteRunTest)
#include "tst_remoterun.moc"
