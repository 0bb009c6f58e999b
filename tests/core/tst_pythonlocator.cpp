#include "pythonlocator.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

using namespace ak;

// Fake interpreters are shell scripts that answer the torch probe like a real python would, so the
// search order is tested through the real probe (a child process), without several Python installs.
class PythonLocatorTest : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_root;

    QString fake(const QString &relPath, bool hasTorch)
    {
        const QString path = m_root.filePath(relPath);
        QDir().mkpath(QFileInfo(path).path());
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return QString();
        f.write(hasTorch ? "#!/bin/sh\nprintf '2.99.0+fake'\n"
                         : "#!/bin/sh\necho 'Traceback (most recent call last):' >&2\n"
                           "echo \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n");
        f.close();
        f.setPermissions(QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
        return path;
    }

    QProcessEnvironment env(const QStringList &pathDirs, const QString &venv = QString(),
        const QString &conda = QString(), const QString &autokernelPython = QString())
    {
        QProcessEnvironment e;
        QStringList dirs;
        for (const QString &d : pathDirs)
            dirs << m_root.filePath(d);
        e.insert(QStringLiteral("PATH"), dirs.join(QLatin1Char(':')));
        if (!venv.isEmpty())
            e.insert(QStringLiteral("VIRTUAL_ENV"), m_root.filePath(venv));
        if (!conda.isEmpty())
            e.insert(QStringLiteral("CONDA_PREFIX"), m_root.filePath(conda));
        if (!autokernelPython.isEmpty())
            e.insert(QStringLiteral("AUTOKERNEL_PYTHON"), autokernelPython);
        return e;
    }

    PythonLocator::Choice locate(const QProcessEnvironment &e, const QString &explicitPython = QString())
    {
        PythonLocator l(e);
        l.setFallback(m_root.filePath(QStringLiteral("nowhere/python3")));
        l.setExplicit(explicitPython);
        return l.locate();
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_root.isValid());
        QVERIFY(!fake(QStringLiteral("bare/python3"), false).isEmpty());
        QVERIFY(!fake(QStringLiteral("good/python3"), true).isEmpty());
        QVERIFY(!fake(QStringLiteral("good2/python3"), true).isEmpty());
        QVERIFY(!fake(QStringLiteral("venv/bin/python"), true).isEmpty());
        QVERIFY(!fake(QStringLiteral("emptyvenv/bin/python"), false).isEmpty());
        QVERIFY(!fake(QStringLiteral("conda/bin/python"), true).isEmpty());
        QVERIFY(!fake(QStringLiteral("custom/mypython"), true).isEmpty());
    }

    void firstPathPythonWithTorchWins()
    {
        const auto c = locate(env({ QStringLiteral("empty"), QStringLiteral("bare"), QStringLiteral("good"),
            QStringLiteral("good2") }));
        QVERIFY2(c.ok(), qPrintable(c.error));
        QCOMPARE(c.python, m_root.filePath(QStringLiteral("good/python3")));
        QCOMPARE(c.source, QStringLiteral("PATH"));
        QCOMPARE(c.torchVersion, QStringLiteral("2.99.0+fake"));
        QCOMPARE(c.skipped.size(), 1);
        QVERIFY2(c.skipped.first().contains(QStringLiteral("No module named 'torch'")),
            qPrintable(c.skipped.first()));
    }

    void activeVenvBeatsPathAndConda()
    {
        const auto c
            = locate(env({ QStringLiteral("good") }, QStringLiteral("venv"), QStringLiteral("conda")));
        QCOMPARE(c.python, m_root.filePath(QStringLiteral("venv/bin/python")));
        QCOMPARE(c.source, QStringLiteral("VIRTUAL_ENV"));
        const auto conda = locate(env({ QStringLiteral("good") }, QString(), QStringLiteral("conda")));
        QCOMPARE(conda.source, QStringLiteral("CONDA_PREFIX"));
    }

    void venvWithoutTorchFallsThrough()
    {
        const auto c = locate(env({ QStringLiteral("good") }, QStringLiteral("emptyvenv")));
        QCOMPARE(c.python, m_root.filePath(QStringLiteral("good/python3")));
        QVERIFY(
            c.skipped.join(QLatin1Char('\n')).contains(QStringLiteral("emptyvenv/bin/python (VIRTUAL_ENV)")));
    }

    void explicitChoiceIsHonouredOrReported()
    {
        const QProcessEnvironment e = env({ QStringLiteral("good") }, QStringLiteral("venv"));
        const auto chosen = locate(e, m_root.filePath(QStringLiteral("custom/mypython")));
        QCOMPARE(chosen.python, m_root.filePath(QStringLiteral("custom/mypython")));
        QCOMPARE(chosen.source, QStringLiteral("--python"));

        // Without torch it is an error naming it, not a silent switch to another interpreter.
        const QString bare = m_root.filePath(QStringLiteral("bare/python3"));
        const auto refused = locate(e, bare);
        QVERIFY(!refused.ok());
        QVERIFY2(
            refused.error.contains(bare) && refused.error.contains(QStringLiteral("cannot import torch")),
            qPrintable(refused.error));

        const auto missing = locate(e, QStringLiteral("/no/such/python"));
        QVERIFY(!missing.ok());
        QVERIFY2(missing.error.contains(QStringLiteral("'/no/such/python'")), qPrintable(missing.error));
    }

    void autokernelPythonBeatsVenv()
    {
        const auto c = locate(env({ QStringLiteral("good") }, QStringLiteral("venv"), QString(),
            m_root.filePath(QStringLiteral("custom/mypython"))));
        QCOMPARE(c.source, QStringLiteral("AUTOKERNEL_PYTHON"));
        QCOMPARE(c.python, m_root.filePath(QStringLiteral("custom/mypython")));
    }

    void noTorchAnywhereIsAClearError()
    {
        const auto c = locate(env({ QStringLiteral("bare") }, QStringLiteral("emptyvenv")));
        QVERIFY(!c.ok());
        QVERIFY2(c.error.contains(QStringLiteral("no Python interpreter that can import torch")),
            qPrintable(c.error));
        QVERIFY2(c.error.contains(QStringLiteral("--python")), qPrintable(c.error));
        QVERIFY2(c.error.contains(m_root.filePath(QStringLiteral("bare/python3"))), qPrintable(c.error));
        QVERIFY2(c.error.contains(QStringLiteral("nowhere/python3 (fallback)")), qPrintable(c.error));
    }

    // The real probe against the test interpreter, which has torch.
    void realInterpreterHasTorch()
    {
        const QString python
            = qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
        const PythonLocator::Probe p = PythonLocator::probeTorch(python);
        QVERIFY2(p.ok, qPrintable(p.error));
        QVERIFY(!p.torchVersion.isEmpty());
    }
};

AK_TEST_CLASS(PythonLocatorTest)
#include "tst_pythonlocator.moc"
