#include "pythonscripts.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

using namespace ak;

// The Python files are linked into the binary as resources and extracted to a content-addressed cache.
class PythonScriptsTest : public QObject
{
    Q_OBJECT
private:
    static QByteArray readFile(const QString &path)
    {
        QFile f(path);
        return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }

private Q_SLOTS:
    void workerIsEmbedded()
    {
        const QStringList files = PythonScripts::files();
        QVERIFY2(files.contains(QStringLiteral("akworker.py")), qPrintable(files.join(QLatin1Char(' '))));
        // Byte for byte the source file, not a stale copy.
        QCOMPARE(readFile(QStringLiteral(":/autokernel/python/akworker.py")),
            readFile(QStringLiteral(AUTOKERNEL_SOURCE_DIR "/core/python/akworker.py")));
    }

    void extractsOnceAndReuses()
    {
        QTemporaryDir cache;
        QString error;
        const QString dir = PythonScripts::extractTo(cache.path(), &error);
        QVERIFY2(!dir.isEmpty(), qPrintable(error));
        QCOMPARE(QFileInfo(dir).fileName(), QStringLiteral("python-") + PythonScripts::contentHash());
        for (const QString &f : PythonScripts::files())
            QCOMPARE(
                readFile(dir + QLatin1Char('/') + f), readFile(QStringLiteral(":/autokernel/python/") + f));
        // No temporary directories are left behind.
        QCOMPARE(QDir(cache.path()).entryList(QDir::Dirs | QDir::NoDotAndDotDot),
            QStringList { QFileInfo(dir).fileName() });

        // A complete directory is reused as is (a file added there survives).
        QFile marker(dir + QStringLiteral("/marker"));
        QVERIFY(marker.open(QIODevice::WriteOnly));
        marker.close();
        QCOMPARE(PythonScripts::extractTo(cache.path(), &error), dir);
        QVERIFY(QFile::exists(dir + QStringLiteral("/marker")));
    }

    void damagedDirectoryIsReplaced()
    {
        QTemporaryDir cache;
        const QString dir = PythonScripts::extractTo(cache.path());
        QVERIFY(!dir.isEmpty());
        QVERIFY(QFile::remove(dir + QStringLiteral("/akworker.py")));
        QString error;
        QCOMPARE(PythonScripts::extractTo(cache.path(), &error), dir);
        QCOMPARE(readFile(dir + QStringLiteral("/akworker.py")),
            readFile(QStringLiteral(":/autokernel/python/akworker.py")));
    }

    void editedFileOfTheSameSizeIsReplaced()
    {
        // The judge runs from this tree: an edit that keeps the size (a kernel rewriting the
        // comparison, say) must not survive the next worker start.
        QTemporaryDir cache;
        const QString dir = PythonScripts::extractTo(cache.path());
        QVERIFY(!dir.isEmpty());
        const QString path = dir + QStringLiteral("/akworker.py");
        QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
        QByteArray bytes = readFile(path);
        QVERIFY(bytes.contains("PROTOCOL = 1"));
        bytes.replace("PROTOCOL = 1", "PROTOCOL = 7");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        f.write(bytes);
        f.close();
        QString error;
        QCOMPARE(PythonScripts::extractTo(cache.path(), &error), dir);
        QCOMPARE(readFile(path), readFile(QStringLiteral(":/autokernel/python/akworker.py")));
        QVERIFY(!(QFileInfo(path).permissions() & QFileDevice::WriteOwner));
    }

    void unwritableCacheIsAClearError()
    {
        QString error;
        QVERIFY(PythonScripts::extractTo(QStringLiteral("/proc/autokernel-cannot-exist"), &error).isEmpty());
        QVERIFY2(error.contains(QStringLiteral("/proc/autokernel-cannot-exist")), qPrintable(error));
    }

    void defaultRootFollowsXdgCacheHome()
    {
        const QByteArray old = qgetenv("XDG_CACHE_HOME");
        QTemporaryDir cache;
        qputenv("XDG_CACHE_HOME", cache.path().toUtf8());
        const QString root = PythonScripts::defaultCacheRoot();
        qputenv("XDG_CACHE_HOME", old);
        QCOMPARE(root, cache.path() + QStringLiteral("/autokernel"));
    }
};

AK_TEST_CLASS(PythonScriptsTest)
#include "tst_pythonscripts.moc"
