#include "testregistry.h"

#include <nlohmann/json.hpp>

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>

// `autokernel-cli doctor` measures the device's roofs on first use and reads them from the cache
// after (#43 item 1): on the CPU, the CPU's copy bandwidth and fp32 matmul throughput.
class RoofsCliTest : public QObject
{
    Q_OBJECT
private:
    QTemporaryDir m_cache;

    QString doctor(const QStringList &more)
    {
        QProcess p;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_CACHE_HOME"), m_cache.path());
        env.insert(QStringLiteral("CUDA_VISIBLE_DEVICES"), QString()); // the CPU's roofs, on any machine
        p.setProcessEnvironment(env);
        const QString python
            = qEnvironmentVariable("AUTOKERNEL_TEST_PYTHON", QStringLiteral("/usr/bin/python3"));
        p.start(qEnvironmentVariable("AUTOKERNEL_CLI"),
            QStringList { QStringLiteral("doctor"), QStringLiteral("--python"), python } + more);
        p.waitForFinished(240000);
        return QString::fromUtf8(p.readAllStandardOutput());
    }

    static QString roofsLine(const QString &out)
    {
        for (const QString &line : out.split(QLatin1Char('\n')))
            if (line.contains(QLatin1String(" roofs: ")))
                return line;
        return {};
    }

    nlohmann::json cache()
    {
        QFile f(m_cache.filePath(QStringLiteral("autokernel/roofs.json")));
        if (!f.open(QIODevice::ReadOnly))
            return {};
        return nlohmann::json::parse(f.readAll().toStdString(), nullptr, false);
    }

private Q_SLOTS:
    void doctorMeasuresOnceThenReadsTheCache()
    {
        const QString first = roofsLine(doctor({}));
        QVERIFY2(first.startsWith(QLatin1String("ok       roofs: copy ")), qPrintable(first));
        QVERIFY2(first.contains(QStringLiteral(" GB/s · fp32 matmul ")), qPrintable(first));
        QVERIFY2(!first.contains(QLatin1String("cached")), qPrintable(first));
        const nlohmann::json c = cache();
        QVERIFY(c.is_object());
        QCOMPARE(int(c.size()), 1);
        const nlohmann::json &entry = c.begin().value();
        QVERIFY(entry["bandwidth_gbs"].get<double>() > 0);
        QVERIFY(entry["tflops"]["fp32"].get<double>() > 0);
        QVERIFY(QString::fromStdString(c.begin().key()).contains(QLatin1String("dtype=fp32")));

        const QString again = roofsLine(doctor({}));
        QVERIFY2(again.contains(QLatin1String(", cached)")), qPrintable(again));
        QCOMPARE(again.section(QLatin1String(" (measured"), 0, 0),
            first.section(QLatin1String(" (measured"), 0, 0));

        const QString measured = roofsLine(doctor({ QStringLiteral("--measure-roofs") }));
        QVERIFY2(!measured.contains(QLatin1String("cached")), qPrintable(measured));
        QVERIFY(cache().begin().value()["measured_at"] >= entry["measured_at"]);
    }

    void aBadDtypeIsNamed()
    {
        const QString out = doctor({ QStringLiteral("--dtype"), QStringLiteral("int3") });
        const QString line = roofsLine(out);
        QVERIFY2(line.startsWith(QLatin1String("warning  roofs: ")) && line.contains(QLatin1String("'int3'")),
            qPrintable(out));
    }
};

AK_TEST_CLASS(RoofsCliTest)
#include "tst_roofscli.moc"
