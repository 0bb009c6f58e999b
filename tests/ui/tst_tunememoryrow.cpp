// Loop ▸ Agent…'s tune page shows what the tune agent remembers from earlier runs (TuneMemory) and
// forgets it after a question: the count, runs and devices of a memory written through
// TuneMemory::remember, Forget accepted (the file is gone) or declined (the entries stay), the memory
// turned off ($AUTOKERNEL_TUNE_MEMORY=none: the button disabled), and a clear() that fails (its error
// shown in the dialog, the fields kept). The question is answered by an injected function, never a
// modal box. Each test points $AUTOKERNEL_TUNE_MEMORY at its own temporary file.
#include "agents/tunememory.h"
#include "dialogs/agentsettingsdialog.h"
#include "dialogs/tunememoryrow.h"
#include "testregistry.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>

#include <memory>

using namespace ak;

namespace {

TuneMemory::Entry tuneEntry(
    const QString &device, const QString &op, const QString &shapes, const QString &run)
{
    TuneMemory::Entry e;
    e.device = device;
    e.opType = op;
    e.dtype = QStringLiteral("float16");
    e.shapes = shapes;
    e.config.insert(QStringLiteral("BLOCK_SIZE"), 128);
    e.speedup = 1.3;
    e.when = QDateTime::currentDateTimeUtc();
    e.runDir = run;
    return e;
}

} // namespace

class TuneMemoryRowTest : public QObject
{
    Q_OBJECT

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QByteArray m_savedEnv;
    bool m_hadEnv = false;

    QString memoryFile() const { return m_dir->filePath(QStringLiteral("tune-memory.json")); }

    // Three configurations kept by two runs on two devices.
    void rememberThree()
    {
        QString error;
        QVERIFY2(TuneMemory::remember(tuneEntry(QStringLiteral("NVIDIA H200"), QStringLiteral("matmul"),
                                          QStringLiteral("[64, 64]"), QStringLiteral("/runs/a")),
                     &error),
            qPrintable(error));
        QVERIFY(TuneMemory::remember(tuneEntry(QStringLiteral("NVIDIA H200"), QStringLiteral("softmax"),
            QStringLiteral("[128]"), QStringLiteral("/runs/a"))));
        QVERIFY(TuneMemory::remember(tuneEntry(QStringLiteral("CPU"), QStringLiteral("matmul"),
            QStringLiteral("[64, 64]"), QStringLiteral("/runs/b"))));
        QCOMPARE(TuneMemory::all().size(), 3);
    }

private Q_SLOTS:
    void init()
    {
        m_hadEnv = qEnvironmentVariableIsSet("AUTOKERNEL_TUNE_MEMORY");
        m_savedEnv = qgetenv("AUTOKERNEL_TUNE_MEMORY");
        m_dir = std::make_unique<QTemporaryDir>();
        QVERIFY(m_dir->isValid());
        qputenv("AUTOKERNEL_TUNE_MEMORY", QFile::encodeName(memoryFile()));
    }
    void cleanup()
    {
        if (m_hadEnv)
            qputenv("AUTOKERNEL_TUNE_MEMORY", m_savedEnv);
        else
            qunsetenv("AUTOKERNEL_TUNE_MEMORY");
        m_dir.reset();
    }

    // The dialog, when it opens, says how many configurations of how many runs on which devices, and
    // where the file is.
    void showsTheCount()
    {
        rememberThree();
        AgentSettingsDialog dialog;
        TuneMemoryRow *row = dialog.tuneMemoryRow();
        QVERIFY(row);
        const QString text = row->summaryLabel()->text();
        QVERIFY2(text.startsWith(QStringLiteral("Tune memory: 3 configurations from 2 runs on this machine "
                                                "(CPU, NVIDIA H200) — ")),
            qPrintable(text));
        QVERIFY2(text.endsWith(QLatin1String("tune-memory.json")), qPrintable(text));
        QVERIFY(row->forgetButton()->isEnabled());
        QVERIFY(row->errorText().isEmpty());
    }

    // A memory with nothing in it (no file yet) says so; nothing to forget.
    void emptyMemory()
    {
        AgentSettingsDialog dialog;
        TuneMemoryRow *row = dialog.tuneMemoryRow();
        QVERIFY2(row->summaryLabel()->text().startsWith(QStringLiteral("Tune memory: empty — ")),
            qPrintable(row->summaryLabel()->text()));
        QVERIFY(!row->forgetButton()->isEnabled());
    }

    // Forget…, the question answered yes: the file is gone and the line says empty.
    void forgetAccepted()
    {
        rememberThree();
        AgentSettingsDialog dialog;
        TuneMemoryRow *row = dialog.tuneMemoryRow();
        QString asked;
        row->setConfirm([&](const QString &question) {
            asked = question;
            return true;
        });
        row->forgetButton()->click();
        QVERIFY2(asked.contains(QLatin1String("3 configurations")), qPrintable(asked));
        QVERIFY(TuneMemory::all().isEmpty());
        QVERIFY(!QFile::exists(memoryFile()));
        QVERIFY2(row->summaryLabel()->text().startsWith(QLatin1String("Tune memory: empty")),
            qPrintable(row->summaryLabel()->text()));
        QVERIFY(!row->forgetButton()->isEnabled());
        QVERIFY(row->errorText().isEmpty());
    }

    // Forget…, the question answered no: every entry stays, the line too.
    void forgetDeclined()
    {
        rememberThree();
        AgentSettingsDialog dialog;
        TuneMemoryRow *row = dialog.tuneMemoryRow();
        const QString before = row->summaryLabel()->text();
        int asked = 0;
        row->setConfirm([&](const QString &) {
            ++asked;
            return false;
        });
        row->forgetButton()->click();
        QCOMPARE(asked, 1);
        QCOMPARE(TuneMemory::all().size(), 3);
        QCOMPARE(row->summaryLabel()->text(), before);
        QVERIFY(row->forgetButton()->isEnabled());
    }

    // $AUTOKERNEL_TUNE_MEMORY=none: the line says the memory is off and Forget… is disabled.
    void turnedOff()
    {
        qputenv("AUTOKERNEL_TUNE_MEMORY", "none");
        AgentSettingsDialog dialog;
        TuneMemoryRow *row = dialog.tuneMemoryRow();
        QVERIFY2(row->summaryLabel()->text().contains(QLatin1String("off ($AUTOKERNEL_TUNE_MEMORY=none)")),
            qPrintable(row->summaryLabel()->text()));
        QVERIFY(!row->forgetButton()->isEnabled());
    }

    // clear() fails (the file became a folder, which QFile::remove cannot delete, even as root): its
    // error is shown in the dialog, which stays usable with its fields as they were.
    void clearFailureShown()
    {
        rememberThree();
        AgentSettingsDialog dialog;
        dialog.seedBox()->setValue(42);
        TuneMemoryRow *row = dialog.tuneMemoryRow();
        row->setConfirm([](const QString &) { return true; });
        QVERIFY(QFile::remove(memoryFile()));
        QVERIFY(QDir().mkpath(memoryFile() + QStringLiteral("/inside")));
        row->forgetButton()->click();
        QVERIFY2(row->errorText().contains(QLatin1String("tune-memory.json")), qPrintable(row->errorText()));
        QVERIFY(QFileInfo(memoryFile()).isDir());
        QCOMPARE(dialog.seedBox()->value(), 42);
        QCOMPARE(dialog.settings().agent.seed, 42);
    }
};

AK_TEST_CLASS(TuneMemoryRowTest)
#include "tst_tunememoryrow.moc"
