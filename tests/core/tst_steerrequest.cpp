// SteerRequest: every action survives toJson / fromJson, the JSON the CLI, the window and the
// in-process loop write reads back to the same bytes, and a bad request is refused with its field named.
#include "steerrequest.h"
#include "testregistry.h"

#include <QTest>

using namespace ak;
using nlohmann::json;

namespace {

SteerRequest parsed(const json &j, QString *error = nullptr)
{
    SteerRequest r;
    QString why;
    if (!SteerRequest::fromJson(j, &r, &why))
        r = SteerRequest::kernelAction(SteerRequest::Action::Pin, QStringLiteral("<refused>"));
    if (error)
        *error = why;
    return r;
}

} // namespace

class SteerRequestTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyActionRoundTrips_data()
    {
        using A = SteerRequest::Action;
        QTest::addColumn<int>("index");
        const QList<SteerRequest> requests = {
            SteerRequest::kernelAction(A::Pin, QStringLiteral("02-softmax"))
                .withReason(QStringLiteral("good enough")),
            SteerRequest::kernelAction(A::Unpin, QStringLiteral("02-softmax")),
            SteerRequest::kernelAction(A::Skip, QStringLiteral("01-matmul")).withReason(QString()),
            SteerRequest::kernelAction(A::Unskip, QStringLiteral("01-matmul")),
            SteerRequest::kernelAction(A::Revert, QStringLiteral("01-matmul"), 7),
            SteerRequest::kernelAction(A::Accept, QString(), 3),
            SteerRequest::kernelAction(A::Reject, QString(), 4).withReason(QStringLiteral("slower on H100")),
            SteerRequest::review(true),
            SteerRequest::review(false),
            SteerRequest::moveOn(
                json { { "roof_pct", 60 } }, QStringLiteral("alice@gpu1 via autokernel-cli (pid 42)")),
            SteerRequest::moveOn(MoveOnRules(), QString()),
            SteerRequest::verification(json { { "model_speedup", 1.25 }, { "ok", true } }),
        };
        for (int i = 0; i < requests.size(); ++i)
            QTest::newRow(qPrintable(QStringLiteral("%1-%2").arg(i).arg(requests[i].actionName()))) << i;
        m_requests = requests;
    }

    void everyActionRoundTrips()
    {
        QFETCH(int, index);
        const SteerRequest r = m_requests.at(index);
        const json j = r.toJson();
        QCOMPARE(QString::fromStdString(j.at("action").get<std::string>()), r.actionName());
        QString error;
        const SteerRequest back = parsed(j, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY2(back == r, j.dump().c_str());
        QCOMPARE(back.toJson().dump(), j.dump());
    }

    void everyActionHasAName()
    {
        using A = SteerRequest::Action;
        for (A a : { A::Pin, A::Unpin, A::Skip, A::Unskip, A::Revert, A::Accept, A::Reject, A::Review,
                 A::MoveOn, A::Verification }) {
            const QString name = SteerRequest::actionName(a);
            QVERIFY(!name.isEmpty());
            QCOMPARE(SteerRequest::actionFromName(name), std::optional<A>(a));
        }
        QCOMPARE(SteerRequest::actionFromName(QStringLiteral("setReviewMode")), std::optional<A>());
    }

    // The queued files as each writer has always written them: read back, they give the same bytes.
    void queuedFilesKeepTheirBytes_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("cli pin") << QString::fromUtf8(
            R"({"action":"pin","experiment":0,"kernel":"02-softmax","reason":"why"})");
        QTest::newRow("cli accept") << QString::fromUtf8(
            R"({"action":"accept","experiment":3,"kernel":"","reason":""})");
        QTest::newRow("loop revert") << QString::fromUtf8(
            R"({"action":"revert","experiment":7,"kernel":"01-matmul"})");
        QTest::newRow("review") << QString::fromUtf8(R"({"action":"review","value":true})");
        QTest::newRow("cli rules") << QString::fromUtf8(
            R"j({"action":"move_on","by":"a@b via autokernel-cli (pid 1)","value":{"hours_per_kernel":1.5,"max_consecutive_reverts":3}})j");
        QTest::newRow("verification")
            << QString::fromUtf8(R"({"action":"verification","value":{"ok":true}})");
    }

    void queuedFilesKeepTheirBytes()
    {
        QFETCH(QString, text);
        QString error;
        const SteerRequest r = parsed(json::parse(text.toStdString()), &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(QString::fromStdString(r.toJson().dump()), text);
    }

    void missingFieldsTakeTheirDefaults()
    {
        QString error;
        const SteerRequest pin = parsed(json { { "action", "pin" }, { "kernel", "02-softmax" } }, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(pin.kernel(), QStringLiteral("02-softmax"));
        QCOMPARE(pin.experiment(), 0);
        QVERIFY(!pin.hasReason());
        const SteerRequest review = parsed(json { { "action", "review" } }, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QCOMPARE(review.action(), SteerRequest::Action::Review);
        QVERIFY(!review.on());
        const SteerRequest rules
            = parsed(json { { "action", "move_on" }, { "value", { { "roof_pct", 60 } } } }, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(rules.by().isEmpty());
    }

    void badRequestNamesTheField_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("named");
        QTest::newRow("no action") << QString::fromUtf8(R"({"kernel":"k"})") << QStringLiteral("\"action\"");
        QTest::newRow("action not text")
            << QString::fromUtf8(R"({"action":7})") << QStringLiteral("\"action\"");
        QTest::newRow("unknown action")
            << QString::fromUtf8(R"({"action":"pinn"})") << QStringLiteral("\"pinn\"");
        QTest::newRow("not an object") << QString::fromUtf8(R"(["pin"])") << QStringLiteral("\"action\"");
        QTest::newRow("kernel") << QString::fromUtf8(R"({"action":"pin","kernel":5})")
                                << QStringLiteral("\"kernel\"");
        QTest::newRow("experiment text") << QString::fromUtf8(R"({"action":"accept","experiment":"3"})")
                                         << QStringLiteral("\"experiment\"");
        QTest::newRow("experiment fraction")
            << QString::fromUtf8(R"({"action":"revert","kernel":"k","experiment":2.5})")
            << QStringLiteral("\"experiment\"");
        QTest::newRow("reason") << QString::fromUtf8(R"({"action":"reject","experiment":3,"reason":false})")
                                << QStringLiteral("\"reason\"");
        QTest::newRow("review value")
            << QString::fromUtf8(R"({"action":"review","value":"on"})") << QStringLiteral("\"value\"");
        QTest::newRow("move_on value")
            << QString::fromUtf8(R"({"action":"move_on","value":5})") << QStringLiteral("\"value\"");
        QTest::newRow("move_on by") << QString::fromUtf8(R"({"action":"move_on","value":{},"by":3})")
                                    << QStringLiteral("\"by\"");
        QTest::newRow("verification value")
            << QString::fromUtf8(R"({"action":"verification"})") << QStringLiteral("\"value\"");
    }

    void badRequestNamesTheField()
    {
        QFETCH(QString, text);
        QFETCH(QString, named);
        SteerRequest out = SteerRequest::review(true);
        QString error;
        QVERIFY(!SteerRequest::fromJson(json::parse(text.toStdString()), &out, &error));
        QVERIFY2(error.contains(named), qPrintable(error));
        QCOMPARE(out, SteerRequest::review(true)); // untouched
    }

private:
    QList<SteerRequest> m_requests;
};

AK_TEST_CLASS(SteerRequestTest)
#include "tst_steerrequest.moc"
