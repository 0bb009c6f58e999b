// ssh:// addresses of remote runs (core/remoterun): what parses, what is refused with its reason,
// and the ssh and rsync commands built from them.
#include "remoterun.h"
#include "runmirror.h"
#include "shellwords.h"
#include "testregistry.h"

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
        QVERIFY(mirror.fetchCommand().contains(QStringLiteral("--files-from=-")));
        QVERIFY(!mirror.fetchCommand().contains(QStringLiteral("--delete")));
        // One cache folder per address.
        QVERIFY(r.cacheDir()
            != RemoteRun::parse(QStringLiteral("ssh://gpu2:2222/runs/my run"), nullptr).cacheDir());
    }
};

AK_TEST_CLASS(RemoteRunTest)
#include "tst_remoterun.moc"
