#include "pythonscripts.h"
#include "shellwords.h"
#include "testregistry.h"
#include "workerclient.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <algorithm>
#include <memory>
#include <thread>

#include <csignal>

using namespace ak;
using json = nlohmann::json;

// Drives a real worker: the embedded akworker.py run by AUTOKERNEL_TEST_PYTHON with the test-only ops.
class WorkerClientTest : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_cache;
    QString m_scriptDir;

    std::unique_ptr<WorkerClient> makeClient()
    {
        auto c = std::make_unique<WorkerClient>();
        c->setPython(qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3")));
        c->setScriptDir(m_scriptDir);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("AK_WORKER_TEST"), QStringLiteral("1"));
        c->setEnvironment(env);
        return c;
    }

    static QString describe(const WorkerReply &r)
    {
        return WorkerReply::statusName(r.status) + QStringLiteral(": ") + r.error + QStringLiteral("\n")
            + r.traceback + QStringLiteral("\nstderr: ") + r.stderrTail;
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_cache.isValid());
        QString error;
        m_scriptDir = PythonScripts::extractTo(m_cache.path(), &error);
        QVERIFY2(!m_scriptDir.isEmpty(), qPrintable(error));
    }

    void workerNeverInheritsAnApiKey()
    {
        // The worker runs the judge and, below it, kernels: neither may see a key.
        qputenv("OPENAI_API_KEY", "sk-worker-env-test-0123456789abcdef");
        qputenv("HF_TOKEN", "hf_workerenvtest0123456789abcdef");
        auto c = makeClient();
        c->setEnvironment([] {
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("AK_WORKER_TEST"), QStringLiteral("1"));
            return env;
        }());
        const WorkerReply r = c->request(QStringLiteral("debug.env"), json::object(), 10000);
        qunsetenv("OPENAI_API_KEY");
        qunsetenv("HF_TOKEN");
        QVERIFY2(r.ok(), qPrintable(describe(r)));
        const auto names = r.result.at("names").get<std::vector<std::string>>();
        QVERIFY(std::find(names.begin(), names.end(), "PATH") != names.end());
        QVERIFY(std::find(names.begin(), names.end(), "AK_WORKER_TEST") != names.end());
        QVERIFY(std::find(names.begin(), names.end(), "OPENAI_API_KEY") == names.end());
        QVERIFY(std::find(names.begin(), names.end(), "HF_TOKEN") == names.end());
    }

    void pingRoundTrip()
    {
        auto c = makeClient();
        const WorkerReply r = c->request(QStringLiteral("ping"), json::object(), 10000);
        QVERIFY2(r.ok(), qPrintable(describe(r)));
        QCOMPARE(r.result.value("pong", false), true);
        QCOMPARE(r.result.value("pid", qint64(0)), c->workerPid());
        QVERIFY(c->workerPid() > 0);
        QCOMPARE(r.result.value("protocol", 0), 1);
        QVERIFY(c->isRunning());
        // Warm: the second request reuses the same process.
        QVERIFY(c->request(QStringLiteral("ping"), json::object(), 10000).ok());
        QCOMPARE(c->startCount(), 1);
    }

    void progressEventsArriveBeforeTheReply()
    {
        auto c = makeClient();
        QSignalSpy spy(c.get(), &WorkerClient::progress);
        QVector<double> fractions;
        QStringList messages;
        const WorkerReply r = c->request(
            QStringLiteral("debug.echo"), json { { "progress", 4 } }, 10000, [&](const QString &m, double f) {
                messages << m;
                fractions << f;
            });
        QVERIFY2(r.ok(), qPrintable(describe(r)));
        QCOMPARE(fractions, (QVector<double> { 0.25, 0.5, 0.75, 1.0 }));
        QCOMPARE(messages.first(), QStringLiteral("step 1"));
        QCOMPARE(spy.count(), 4);
        QCOMPARE(r.result["echo"]["progress"].get<int>(), 4);
    }

    void pythonExceptionBecomesError()
    {
        auto c = makeClient();
        const WorkerReply r
            = c->request(QStringLiteral("debug.echo"), json { { "raise", "kernel exploded" } }, 10000);
        QCOMPARE(r.status, WorkerReply::Status::Error);
        QCOMPARE(r.error, QStringLiteral("ValueError: kernel exploded"));
        QVERIFY2(r.traceback.contains(QStringLiteral("Traceback")), qPrintable(r.traceback));
        QVERIFY(!r.fatal);
        // An ordinary exception leaves the warm worker in place.
        const qint64 pid = c->workerPid();
        QVERIFY(c->request(QStringLiteral("ping"), json::object(), 10000).ok());
        QCOMPARE(c->workerPid(), pid);
    }

    void unknownOpIsAnError()
    {
        auto c = makeClient();
        const WorkerReply r = c->request(QStringLiteral("frobnicate"), json::object(), 10000);
        QCOMPARE(r.status, WorkerReply::Status::Error);
        QVERIFY2(r.error.contains(QStringLiteral("unknown op 'frobnicate'")), qPrintable(r.error));
    }

    void hangBecomesTimeoutAndNextRequestWorks()
    {
        auto c = makeClient();
        QVERIFY(c->start());
        const qint64 firstPid = c->workerPid();
        QElapsedTimer t;
        t.start();
        const WorkerReply r = c->request(QStringLiteral("debug.sleep"), json { { "seconds", 60 } }, 1000);
        QCOMPARE(r.status, WorkerReply::Status::Timeout);
        QVERIFY2(t.elapsed() < 4000, qPrintable(QString::number(t.elapsed())));
        QVERIFY(r.seconds >= 0.9);
        QVERIFY(!c->isRunning());
        // What the hung request printed is kept for the report.
        QVERIFY2(
            r.stderrTail.contains(QStringLiteral("debug.sleep: sleeping 60 s")), qPrintable(r.stderrTail));
        const WorkerReply next = c->request(QStringLiteral("ping"), json::object(), 10000);
        QVERIFY2(next.ok(), qPrintable(describe(next)));
        QVERIFY(c->workerPid() != firstPid);
        QCOMPARE(c->startCount(), 2);
    }

    void abortBecomesCrashAndWorkerRestarts()
    {
        auto c = makeClient();
        QVERIFY(c->start());
        const qint64 firstPid = c->workerPid();
        const WorkerReply r = c->request(QStringLiteral("debug.crash"), json::object(), 10000);
        QCOMPARE(r.status, WorkerReply::Status::Crash);
        QVERIFY2(r.error.contains(QStringLiteral("crashed")), qPrintable(r.error));
        // faulthandler's dump and our last line are kept for the error report.
        QVERIFY2(r.stderrTail.contains(QStringLiteral("debug.crash: aborting")), qPrintable(r.stderrTail));
        const WorkerReply next = c->request(QStringLiteral("ping"), json::object(), 10000);
        QVERIFY2(next.ok(), qPrintable(describe(next)));
        QVERIFY(c->workerPid() != firstPid);
    }

    void cudaFaultIsFatalAndRestarts()
    {
        auto c = makeClient();
        QVERIFY(c->start());
        const qint64 firstPid = c->workerPid();
        const WorkerReply r = c->request(QStringLiteral("debug.echo"),
            json { { "raise", "CUDA error: an illegal memory access was encountered" } }, 10000);
        QCOMPARE(r.status, WorkerReply::Status::Crash);
        QVERIFY(r.fatal);
        QVERIFY2(r.error.contains(QStringLiteral("illegal memory access")), qPrintable(r.error));
        QVERIFY(!r.traceback.isEmpty());
        QVERIFY(c->request(QStringLiteral("ping"), json::object(), 10000).ok());
        QVERIFY(c->workerPid() != firstPid);
    }

    void printingDoesNotBreakTheProtocol()
    {
        auto c = makeClient();
        // Text that looks like a reply, printed by user code through print() and through fd 1.
        const std::string fake = R"({"id":1,"ok":true,"result":{"forged":true}})";
        const WorkerReply r = c->request(QStringLiteral("debug.echo"), json { { "print", fake } }, 10000);
        QVERIFY2(r.ok(), qPrintable(describe(r)));
        QVERIFY(!r.result.contains("forged"));
        QCOMPARE(r.result["echo"]["print"].get<std::string>(), fake);
        QVERIFY2(r.stderrTail.contains(QStringLiteral("forged")), qPrintable(r.stderrTail));
        QVERIFY2(r.stderrTail.contains(QStringLiteral("(fd 1)")), qPrintable(r.stderrTail));
        QVERIFY(c->request(QStringLiteral("ping"), json::object(), 10000).ok());
    }

    void asyncRequestsRunInOrder()
    {
        auto c = makeClient();
        QSignalSpy spy(c.get(), &WorkerClient::replied);
        const int a = c->submit(QStringLiteral("debug.echo"), json { { "n", 1 } }, 10000);
        const int b = c->submit(QStringLiteral("debug.echo"), json { { "n", 2 } }, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(spy.count(), 2, 15000);
        QCOMPARE(spy.at(0).at(0).toInt(), a);
        QCOMPARE(spy.at(1).at(0).toInt(), b);
        const auto second = spy.at(1).at(1).value<WorkerReply>();
        QVERIFY(second.ok());
        QCOMPARE(second.result["echo"]["n"].get<int>(), 2);
    }

    void asyncTimeoutFiresFromTheEventLoop()
    {
        auto c = makeClient();
        QSignalSpy spy(c.get(), &WorkerClient::replied);
        c->submit(QStringLiteral("debug.sleep"), json { { "seconds", 60 } }, 800);
        QVERIFY(spy.wait(10000));
        QCOMPARE(spy.at(0).at(1).value<WorkerReply>().status, WorkerReply::Status::Timeout);
    }

    void cancelFromAnotherThreadKillsTheChild()
    {
        auto c = makeClient();
        QVERIFY(c->start());
        WorkerClient *client = c.get();
        std::thread canceller([client] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            client->cancel();
        });
        QElapsedTimer t;
        t.start();
        const WorkerReply r = c->request(QStringLiteral("debug.sleep"), json { { "seconds", 60 } }, 30000);
        canceller.join();
        QCOMPARE(r.status, WorkerReply::Status::Cancelled);
        QVERIFY2(t.elapsed() < 3000, qPrintable(QString::number(t.elapsed())));
        QVERIFY(c->request(QStringLiteral("ping"), json::object(), 10000).ok());
    }

    void missingInterpreterIsUnavailable()
    {
        auto c = makeClient();
        c->setPython(QStringLiteral("/nonexistent/bin/python3"));
        const WorkerReply r = c->request(QStringLiteral("ping"), json::object(), 5000);
        QCOMPARE(r.status, WorkerReply::Status::Unavailable);
        QVERIFY2(r.error.contains(QStringLiteral("/nonexistent/bin/python3")), qPrintable(r.error));
    }

    // A launcher runs the worker through another program (`env` here, `ssh host` for real). Nothing is
    // shared: the far side's cache starts empty, the bootstrap asks for the files and checks them.
    void launcherFetchesTheWorkerFilesThroughTheChannel()
    {
        QTemporaryDir far;
        QVERIFY(far.isValid());
        auto c = makeClient();
        c->setLauncher(WorkerLauncher({ QStringLiteral("env"), QStringLiteral("AK_LAUNCHED=yes"),
            QStringLiteral("XDG_CACHE_HOME=") + far.path() }));
        WorkerReply r = c->request(QStringLiteral("ping"), json::object(), 20000);
        QVERIFY2(r.ok(), qPrintable(describe(r)));
        const QString dir
            = far.path() + QStringLiteral("/autokernel/remote/python-") + PythonScripts::contentHash();
        QCOMPARE(QString::fromStdString(r.result.value("worker_dir", std::string())), dir);
        QVERIFY(QFileInfo::exists(dir + QStringLiteral("/akworker.py")));
        QFile environ(QStringLiteral("/proc/%1/environ").arg(c->workerPid()));
        QVERIFY(environ.open(QIODevice::ReadOnly));
        QVERIFY(environ.readAll().contains("AK_LAUNCHED=yes"));
        // The test ops need AK_WORKER_TEST, forwarded by the bootstrap's ENV argument.
        r = c->request(QStringLiteral("debug.echo"), json { { "progress", 1 } }, 10000);
        QVERIFY2(r.ok(), qPrintable(describe(r)));
        c->stop();

        // A file changed there (same size) is noticed by content and replaced on the next start.
        const QString bench = dir + QStringLiteral("/akboot.py");
        QFile::setPermissions(dir, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
        QFile::setPermissions(bench, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        QByteArray bytes;
        {
            QFile f(bench);
            QVERIFY(f.open(QIODevice::ReadWrite));
            bytes = f.readAll();
            f.seek(0);
            f.write(QByteArray(bytes.size(), '#'));
        }
        r = c->request(QStringLiteral("ping"), json::object(), 20000);
        QVERIFY2(r.ok(), qPrintable(describe(r)));
        QFile again(bench);
        QVERIFY(again.open(QIODevice::ReadOnly));
        QCOMPARE(again.readAll(), bytes);
    }

    // ssh hands its remote command to a shell as one line: the bootstrap (quotes, newlines and all)
    // must survive that. A stand-in `ssh` runs the line with sh, as sshd would; its 255 is a
    // connection failure in words, and a launcher killed mid-request is a crash of that request.
    void sshLauncherQuotesForTheRemoteShell()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString fake = dir.filePath(QStringLiteral("ssh"));
        {
            QFile f(fake);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(
                "#!/bin/sh\n"
                "while [ $# -gt 1 ]; do case \"$1\" in -o|-p) shift 2;; -*) shift;; *) break;; esac; done\n"
                "[ \"$1\" = unreachable ] && { echo 'ssh: connect to host unreachable: refused' >&2; exit "
                "255; }\n"
                "shift\nexec sh -c \"$*\"\n");
        }
        QFile::setPermissions(fake, QFileDevice::ReadOwner | QFileDevice::ExeOwner | QFileDevice::WriteOwner);
        const QString python
            = qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
        qputenv("XDG_CACHE_HOME", dir.path().toUtf8()); // the stand-in's "remote" side inherits it
        auto c = makeClient();
        c->setLauncher(WorkerLauncher({ fake, QStringLiteral("gpu1") }));
        WorkerReply r = c->request(QStringLiteral("ping"), json::object(), 20000);
        QVERIFY2(r.ok(), qPrintable(describe(r)));
        QVERIFY(QFileInfo::exists(dir.path() + QStringLiteral("/autokernel/remote")));

        // Mid-request, the launcher dies: the request is a crash that says so; the next one restarts.
        const int startsBefore = c->startCount();
        std::thread killer([pid = c->workerPid()] {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            ::kill(pid_t(pid), SIGKILL);
        });
        r = c->request(QStringLiteral("debug.sleep"), json { { "seconds", 10 } }, 20000);
        killer.join();
        QCOMPARE(r.status, WorkerReply::Status::Crash);
        r = c->request(QStringLiteral("ping"), json::object(), 20000);
        QVERIFY2(r.ok(), qPrintable(describe(r)));
        QCOMPARE(c->startCount(), startsBefore + 1);

        auto down = makeClient();
        down->setLauncher(WorkerLauncher({ fake, QStringLiteral("unreachable") }));
        r = down->request(QStringLiteral("ping"), json::object(), 20000);
        QCOMPARE(r.status, WorkerReply::Status::Unavailable);
        QVERIFY2(r.error.contains(QStringLiteral("ssh connection failed")), qPrintable(r.error));
        QVERIFY2(r.error.contains(QStringLiteral("refused")), qPrintable(r.error));
        qunsetenv("XDG_CACHE_HOME");
    }

    void launcherWordsAndQuoting()
    {
        QString error;
        const WorkerLauncher l = WorkerLauncher::parse(QStringLiteral("ssh -p 2222 'gpu 1'"), &error);
        QVERIFY(error.isEmpty());
        QVERIFY(l.isSsh());
        const QStringList words = { QStringLiteral("python3"), QStringLiteral("-c"),
            QStringLiteral("print('a b')\n\"x\" $HOME `id`"), QStringLiteral("e30=") };
        const QStringList cmd = l.command(words);
        QCOMPARE(cmd.first(), QStringLiteral("ssh"));
        QVERIFY(cmd.contains(QStringLiteral("BatchMode=yes")));
        QCOMPARE(cmd.at(cmd.size() - 2), QStringLiteral("gpu 1"));
        QChar unclosed;
        QCOMPARE(shellwords::split(cmd.last(), &unclosed), words); // what the remote shell will run
        QVERIFY(WorkerLauncher::parse(QStringLiteral("ssh -o BatchMode=no h"), &error)
                    .command(words)
                    .filter(QStringLiteral("BatchMode"))
                    .size()
            == 1);
        // srun and the like get the words unquoted; a bad quote is an error that names it.
        QCOMPARE(WorkerLauncher::parse(QStringLiteral("srun --gpus=1"), &error).command(words).mid(2), words);
        WorkerLauncher::parse(QStringLiteral("ssh 'gpu1"), &error);
        QVERIFY2(error.contains(QStringLiteral("unclosed")), qPrintable(error));
    }
};

AK_TEST_CLASS(WorkerClientTest)
#include "tst_workerclient.moc"
