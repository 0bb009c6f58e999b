#include "secrets.h"
#include "testregistry.h"

using namespace ak;

// API keys never reach a child's environment, nor any text the run records.
class SecretsTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void secretLookingNames_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("secret");
        QTest::newRow("openai") << QStringLiteral("OPENAI_API_KEY") << true;
        QTest::newRow("anthropic") << QStringLiteral("ANTHROPIC_API_KEY") << true;
        QTest::newRow("hf") << QStringLiteral("HF_TOKEN") << true;
        QTest::newRow("github") << QStringLiteral("GITHUB_TOKEN") << true;
        QTest::newRow("aws") << QStringLiteral("AWS_SECRET_ACCESS_KEY") << true;
        QTest::newRow("aws id") << QStringLiteral("AWS_ACCESS_KEY_ID") << true;
        QTest::newRow("password") << QStringLiteral("DB_PASSWORD") << true;
        QTest::newRow("ssh agent") << QStringLiteral("SSH_AUTH_SOCK") << true;
        QTest::newRow("path") << QStringLiteral("PATH") << false;
        QTest::newRow("ld") << QStringLiteral("LD_LIBRARY_PATH") << false;
        QTest::newRow("cuda") << QStringLiteral("CUDA_VISIBLE_DEVICES") << false;
        QTest::newRow("home") << QStringLiteral("HOME") << false;
        QTest::newRow("venv") << QStringLiteral("VIRTUAL_ENV") << false;
        QTest::newRow("keyboard") << QStringLiteral("KEYBOARD_LAYOUT") << false;
    }

    void secretLookingNames()
    {
        QFETCH(QString, name);
        QFETCH(bool, secret);
        QCOMPARE(secrets::looksSecret(name), secret);
    }

    void scrubbedEnvironmentKeepsWhatWorkersNeed()
    {
        secrets::registerName(QStringLiteral("MY_LLM_CREDENTIAL_VAR"));
        secrets::registerName(QStringLiteral("LOCAL_LLM")); // named by --api-key-env, no pattern
        QProcessEnvironment env;
        env.insert(QStringLiteral("PATH"), QStringLiteral("/usr/bin"));
        env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QStringLiteral("1"));
        env.insert(QStringLiteral("OPENAI_API_KEY"), QStringLiteral("sk-abc"));
        env.insert(QStringLiteral("LOCAL_LLM"), QStringLiteral("hunter2hunter2"));
        const QProcessEnvironment out = secrets::scrubbed(env);
        QCOMPARE(out.value(QStringLiteral("PATH")), QStringLiteral("/usr/bin"));
        QCOMPARE(out.value(QStringLiteral("CUDA_VISIBLE_DEVICES")), QStringLiteral("1"));
        QVERIFY(!out.contains(QStringLiteral("OPENAI_API_KEY")));
        QVERIFY(!out.contains(QStringLiteral("LOCAL_LLM")));
    }

    void registeredValuesAndKeyShapesAreRedacted()
    {
        const QString key = QStringLiteral("local-server-secret-9f8e7d6c");
        secrets::registerValue(key);
        secrets::registerValue(QStringLiteral("short")); // too short to redact safely
        const QString text
            = QStringLiteral("kernel_fn raised RuntimeError: env {'K': '%1'}, also "
                             "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX and hf_abcdefghijklmnopqrstuvwx; "
                             "a short word stays")
                  .arg(key);
        const QString out = secrets::redact(text);
        QVERIFY2(!out.contains(key), qPrintable(out));
        QVERIFY2(!out.contains(QStringLiteral("sk-proj-ABCDEF")), qPrintable(out));
        QVERIFY2(!out.contains(QStringLiteral("hf_abcdef")), qPrintable(out));
        QCOMPARE(out.count(QStringLiteral("[redacted]")), 3);
        QVERIFY(out.contains(QStringLiteral("a short word stays")));
        QVERIFY(out.contains(QStringLiteral("kernel_fn raised RuntimeError")));
        QCOMPARE(
            secrets::redact(QStringLiteral("nothing secret here")), QStringLiteral("nothing secret here"));
    }
};

AK_TEST_CLASS(SecretsTest)
#include "tst_secrets.moc"
