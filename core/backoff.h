#pragma once

#include <QtGlobal>

namespace ak {

// A wait that doubles each time it is taken, up to a cap, until reset: the loop's pauses after
// refused writes, agent outages and an unreachable remote worker. Value type: copyable, no clock.
class Backoff
{
public:
    // The first wait is baseMs; each next one doubles, at most maxDoublings times and never above capMs.
    Backoff(qint64 baseMs, qint64 capMs, int maxDoublings = 62);

    qint64 next(); // the wait to take now (the one after it doubles)
    void reset(); // the trouble is over: the next wait is baseMs again

private:
    qint64 m_base;
    qint64 m_cap;
    int m_maxDoublings;
    int m_taken = 0; // waits taken since reset
};

} // namespace ak
