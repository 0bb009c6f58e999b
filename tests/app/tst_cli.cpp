#include "gitrepo.h"
#include "testfixtures.h"
#include "testregistry.h"

#include <QFile>
#include <QTemporaryDir>

#include <QProcess>
#include <QTcpServer>

// Drives the real autokernel-cli binary, as a user or a script would.
class CliTest : public QObject
{
    Q_OBJECT
private:
    static QString cli() { return qEnvironmentVariable("AUTOKERNEL_CLI"); }

    static QProcess *run(const QStringList &args)
    {
        auto *p = new QProcess;
        p->start(cli(), args);
        p->waitForFinished(30000);
        return p;
    }

private Q_SLOTS:
    void initTestCase() { QVERIFY2(QFile::exists(cli()), "AUTOKERNEL_CLI must point at the built binary"); }

    void helpListsSubcommands()
    {
        std::unique_ptr<QProcess> p(run({ QStringLiteral("--help") }));
        QCOMPARE(p->exitCode(), 0);
        const QString out = QString::fromUtf8(p->readAllStandardOutput());
        QVERIFY(out.contains(QStringLiteral("Commands:")));
        QVERIFY(out.contains(QStringLiteral("version")));
    }

    void versionPrintsProjectVersionAndRevision()
    {
        std::unique_ptr<QProcess> p(run({ QStringLiteral("--version") }));
        QCOMPARE(p->exitCode(), 0);
        // The commit the binary was built from: the source checkout's HEAD (read through libgit2).
        QString error;
        auto repo = ak::GitRepo::open(qEnvironmentVariable("AUTOKERNEL_SOURCE_DIR"), &error);
        QVERIFY2(repo, qPrintable(error));
        const QString head = repo->resolveRef(QStringLiteral("HEAD")).left(12);
        QVERIFY(!head.isEmpty());
        QCOMPARE(QString::fromUtf8(p->readAllStandardOutput()).trimmed(),
            QStringLiteral("autokernel-cli " AUTOKERNEL_VERSION " (git %1)").arg(head));
    }

    // doctor, what a user runs first on a new machine: torch found and described; an interpreter
    // without torch is a clear error and exit 1, naming what to do.
    void doctorReportsWhatItFinds()
    {
        const QString python
            = qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
        std::unique_ptr<QProcess> p(run({ QStringLiteral("doctor"), QStringLiteral("--python"), python }));
        p->waitForFinished(120000);
        const QString out = QString::fromUtf8(p->readAllStandardOutput());
        QCOMPARE(p->exitCode(), 0);
        for (const char *line : { "ok       embedded Python: Python 3.", "ok       Python with torch: ",
                 ", torch ", "GPU (torch): ", "Triton: ", "sandbox: ", "ready" })
            QVERIFY2(out.contains(QLatin1String(line)), qPrintable(out));

        // torch hidden: site-packages off (python -S), as on a server where torch is in another venv.
        QTemporaryDir tmp;
        const QString noTorch = tmp.filePath(QStringLiteral("python3"));
        QFile script(noTorch);
        QVERIFY(script.open(QIODevice::WriteOnly));
        script.write(QStringLiteral("#!/bin/sh\nexec %1 -S \"$@\"\n").arg(python).toUtf8());
        script.close();
        script.setPermissions(script.permissions() | QFileDevice::ExeOwner);
        std::unique_ptr<QProcess> bad(run({ QStringLiteral("doctor"), QStringLiteral("--python"), noTorch }));
        bad->waitForFinished(120000);
        const QString badOut = QString::fromUtf8(bad->readAllStandardOutput());
        QCOMPARE(bad->exitCode(), 1);
        QVERIFY2(badOut.contains(QStringLiteral("error    Python with torch: none found"))
                && badOut.contains(noTorch) && badOut.contains(QStringLiteral("install PyTorch")),
            qPrintable(badOut));
    }

    // #43 item 6: the user's price table for an LLM run; one that cannot be read names its cause.
    void runPricesThatCannotBeReadAreAUsageError()
    {
        QTemporaryDir dir;
        QVERIFY(ak::test::makeRunDir(dir.path()));
        std::unique_ptr<QProcess> p(run({ QStringLiteral("run"), dir.path(), QStringLiteral("--prices"),
            QStringLiteral("{\"gpt-4.1\": {\"input\": -2}}") }));
        QCOMPARE(p->exitCode(), 2);
        QString err = QString::fromUtf8(p->readAllStandardError());
        QVERIFY2(err.contains(QStringLiteral(
                     "--prices: price table: \"gpt-4.1\".input: expected a non-negative number")),
            qPrintable(err));
        p.reset(run({ QStringLiteral("run"), dir.path(), QStringLiteral("--prices"),
            dir.filePath(QStringLiteral("nope.json")) }));
        QCOMPARE(p->exitCode(), 2);
        err = QString::fromUtf8(p->readAllStandardError());
        QVERIFY2(err.contains(QStringLiteral("--prices: cannot read ")), qPrintable(err));
    }

    void unknownCommandIsUsageError()
    {
        std::unique_ptr<QProcess> p(run({ QStringLiteral("frobnicate") }));
        QCOMPARE(p->exitCode(), 2);
        QVERIFY(QString::fromUtf8(p->readAllStandardError())
                    .contains(QStringLiteral("unknown command 'frobnicate'")));
    }

    // llm-check before an overnight run: a server that is not there is named with the flag to fix,
    // and a missing model is a usage error (the probe itself: tests/agent/tst_llmprobe.cpp).
    void llmCheckNamesTheCause()
    {
        QTcpServer closed;
        QVERIFY(closed.listen(QHostAddress::LocalHost, 0));
        const quint16 port = closed.serverPort();
        closed.close();
        std::unique_ptr<QProcess> p(run({ QStringLiteral("llm-check"), QStringLiteral("--base-url"),
            QStringLiteral("http://127.0.0.1:%1/v1").arg(port), QStringLiteral("--model"),
            QStringLiteral("m") }));
        QCOMPARE(p->exitCode(), 2);
        const QString out = QString::fromUtf8(p->readAllStandardOutput());
        QVERIFY2(out.contains(QStringLiteral("cannot reach the server at http://127.0.0.1:%1").arg(port))
                && out.contains(QStringLiteral("--base-url")),
            qPrintable(out));
        // The limits a run would meet, each with its source, are printed even when nothing answers.
        QVERIFY2(out.contains(QStringLiteral("context: not reported"))
                && out.contains(QStringLiteral("output limit: not reported"))
                && out.contains(QStringLiteral("a run asks for max_tokens 16384")),
            qPrintable(out));
        std::unique_ptr<QProcess> none(run({ QStringLiteral("llm-check") }));
        QCOMPARE(none->exitCode(), 2);
        QVERIFY(QString::fromUtf8(none->readAllStandardError()).contains(QStringLiteral("no model is set")));
    }

    // The headless twin must run on a server without a display: no Qt GUI or Widgets libraries.
    void linksNoGuiLibraries()
    {
        QProcess ldd;
        ldd.start(QStringLiteral("ldd"), { cli() });
        QVERIFY(ldd.waitForFinished(10000));
        const QString deps = QString::fromUtf8(ldd.readAllStandardOutput());
        QVERIFY2(deps.contains(QStringLiteral("libQt6Core")), qPrintable(deps));
        QVERIFY2(!deps.contains(QStringLiteral("libQt6Gui")), qPrintable(deps));
        QVERIFY2(!deps.contains(QStringLiteral("libQt6Widgets")), qPrintable(deps));
    }
};

AK_TEST_CLASS(CliTest)
#include "tst_cli.moc"
