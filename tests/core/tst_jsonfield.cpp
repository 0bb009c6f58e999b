#include "jsonfield.h"
#include "testregistry.h"

#include <QTest>

#include <cmath>

namespace jf = ak::jsonfield;
using Json = nlohmann::json;

namespace {

// One object with a field of every kind, null, and numbers written both ways.
Json sample()
{
    return Json::parse(R"({"s": "héllo", "i": 7, "neg": -3, "f": 2.5, "whole": 3.0, "b": true,
                            "n": null, "o": {"k": 1}, "a": ["x", 1, "y", null]})");
}

} // namespace

class JsonFieldTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void lenientReadsTheRightType()
    {
        const Json o = sample();
        QCOMPARE(jf::text(o, "s"), QStringLiteral("héllo"));
        QCOMPARE(jf::number(o, "f", 0), 2.5);
        QCOMPARE(jf::integer(o, "i", 0), qint64(7));
        QCOMPARE(jf::integer(o, "neg", 0), qint64(-3));
        QCOMPARE(jf::boolean(o, "b", false), true);
        QVERIFY(jf::object(o, "o"));
        QCOMPARE(jf::object(o, "o")->size(), size_t(1));
        QVERIFY(jf::array(o, "a"));
    }

    void numbersTakeIntegersAndFloatsIntegersOnlyIntegers()
    {
        const Json o = sample();
        QCOMPARE(jf::number(o, "i", 0), 7.0);
        QCOMPARE(jf::number(o, "whole", 0), 3.0);
        // A float is not a whole number, even 3.0: the fallback, not a truncated value.
        QCOMPARE(jf::integer(o, "f", -1), qint64(-1));
        QCOMPARE(jf::integer(o, "whole", -1), qint64(-1));
        jf::Problem p;
        QVERIFY(!jf::strict::integer(o, "f", &p));
        QVERIFY(p.wrongType());
        QCOMPARE(p.phrase(), QStringLiteral("is not a whole number"));
    }

    void lenientFallsBackOnMissingNullAndWrongType()
    {
        const Json o = sample();
        for (const char *key : { "absent", "n", "s", "o" }) {
            if (qstrcmp(key, "s") != 0)
                QCOMPARE(jf::text(o, key), QString());
            QCOMPARE(jf::number(o, key, 0), 0.0);
            QVERIFY(std::isnan(jf::number(o, key, std::nan(""))));
            QCOMPARE(jf::integer(o, key, 42), qint64(42));
            QCOMPARE(jf::boolean(o, key, true), true);
            QCOMPARE(jf::boolean(o, key, false), false);
        }
        QCOMPARE(jf::text(o, "i", QStringLiteral("-")), QStringLiteral("-"));
        QCOMPARE(jf::text(o, "n", QStringLiteral("-")), QStringLiteral("-"));
        QVERIFY(!jf::object(o, "a"));
        QVERIFY(!jf::array(o, "o"));
        QVERIFY(!jf::object(o, "n"));
        QCOMPARE(jf::boolean(o, "i", false), false); // 1 is not true
    }

    void aNonObjectHasNoFields()
    {
        for (const Json &v : { Json(), Json(3), Json("s"), Json::array({ 1, 2 }) }) {
            QCOMPARE(jf::text(v, "s"), QString());
            QCOMPARE(jf::number(v, "s", -1), -1.0);
            jf::Problem p;
            QVERIFY(!jf::strict::number(v, "s", &p));
            QVERIFY(p.missing());
        }
    }

    void textsKeepsOnlyStrings()
    {
        const Json o = sample();
        QCOMPARE(jf::texts(o, "a"), (QStringList { QStringLiteral("x"), QStringLiteral("y") }));
        QCOMPARE(jf::texts(o, "s"), QStringList());
        QCOMPARE(jf::texts(o, "absent"), QStringList());
    }

    void strictNamesTheFieldAndTheProblem()
    {
        const Json o = sample();
        jf::Problem p;
        QCOMPARE(jf::strict::number(o, "f", &p), std::optional<double>(2.5));
        QVERIFY(!p); // untouched on success

        QVERIFY(!jf::strict::number(o, "s", &p));
        QVERIFY(p.wrongType());
        QCOMPARE(p.field(), QStringLiteral("s"));
        QCOMPARE(p.phrase(), QStringLiteral("is not a number"));
        QCOMPARE(p.message(), QStringLiteral("\"s\" is not a number"));

        jf::Problem missing;
        QVERIFY(!jf::strict::text(o, "absent", &missing));
        QVERIFY(missing.missing());
        QCOMPARE(missing.message(), QStringLiteral("\"absent\" is missing"));

        // null reads as missing: the worker writes NaN and Inf as null.
        jf::Problem null;
        QVERIFY(!jf::strict::boolean(o, "n", &null));
        QVERIFY(null.missing());
    }

    void strictPhrasesPerType()
    {
        const Json o = sample();
        const auto phrase = [&o](auto read) {
            jf::Problem p;
            read(o, "i", &p);
            return p.phrase();
        };
        QCOMPARE(
            phrase([](const Json &j, const char *k, jf::Problem *p) { return jf::strict::text(j, k, p); }),
            QStringLiteral("is not a string"));
        QCOMPARE(
            phrase([](const Json &j, const char *k, jf::Problem *p) { return jf::strict::boolean(j, k, p); }),
            QStringLiteral("is not true or false"));
        QCOMPARE(
            phrase([](const Json &j, const char *k, jf::Problem *p) { return jf::strict::object(j, k, p); }),
            QStringLiteral("is not an object"));
        QCOMPARE(
            phrase([](const Json &j, const char *k, jf::Problem *p) { return jf::strict::array(j, k, p); }),
            QStringLiteral("is not a list"));
        QCOMPARE(jf::strict::text(o, "s"), std::optional<QString>(QStringLiteral("héllo")));
        QCOMPARE(jf::strict::integer(o, "i"), std::optional<qint64>(7));
        QCOMPARE(jf::strict::boolean(o, "b"), std::optional<bool>(true));
        QVERIFY(!jf::strict::integer(o, "absent")); // no Problem asked for: still nullopt
    }
};

AK_TEST_CLASS(JsonFieldTest)
#include "tst_jsonfield.moc"
