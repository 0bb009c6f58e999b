// The loop's pauses as one value type (#42): doubling from the base, capped, bounded doublings, reset.
#include "backoff.h"
#include "testregistry.h"

#include <QTest>

using namespace ak;

class BackoffTest : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void doublesUpToTheCap()
    {
        Backoff b(5000, 300000); // the loop's refused writes: 5 s, doubling, 5 min at most
        const qint64 want[] = { 5000, 10000, 20000, 40000, 80000, 160000, 300000, 300000 };
        for (qint64 w : want)
            QCOMPARE(b.next(), w);
        for (int i = 0; i < 100; ++i)
            QCOMPARE(b.next(), qint64(300000)); // the cap holds however long the trouble lasts
    }

    void boundedDoublingsStopBelowTheCap()
    {
        // The breaker with a 1 s pause: at most 8 doublings (256 s), below its 15 min cap.
        Backoff b(1000, 900000, 8);
        qint64 last = 0;
        for (int i = 0; i < 12; ++i)
            last = b.next();
        QCOMPARE(last, qint64(256000));
        // A 60 s pause reaches the cap first: 60, 120, 240, 480, then 900 s.
        Backoff breaker(60000, 900000, 8);
        const qint64 want[] = { 60000, 120000, 240000, 480000, 900000, 900000 };
        for (qint64 w : want)
            QCOMPARE(breaker.next(), w);
    }

    void resetStartsAgainAndCopiesAreIndependent()
    {
        Backoff b(30000, 900000, 8);
        b.next();
        b.next();
        Backoff copy = b;
        b.reset();
        QCOMPARE(b.next(), qint64(30000)); // from the base again
        QCOMPARE(b.next(), qint64(60000));
        QCOMPARE(copy.next(), qint64(120000)); // the copy kept its own count
    }

    void noOverflowAndNoNegativeWaits()
    {
        Backoff huge(qint64(1) << 40, std::numeric_limits<qint64>::max(), 62);
        qint64 last = 0;
        for (int i = 0; i < 100; ++i) {
            const qint64 w = huge.next();
            QVERIFY2(w >= last, "a wait never shrinks while the trouble lasts");
            last = w;
        }
        QVERIFY(last > 0);
        Backoff zero(0, 1000);
        QCOMPARE(zero.next(), qint64(0));
        Backoff negative(-5, 1000);
        QCOMPARE(negative.next(), qint64(0));
    }
};

AK_TEST_CLASS(BackoffTest)
#include "tst_backoff.moc"
