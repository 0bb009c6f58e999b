#include "backoff.h"

#include <algorithm>

namespace ak {

Backoff::Backoff(qint64 baseMs, qint64 capMs, int maxDoublings)
    : m_base(std::max<qint64>(0, baseMs))
    , m_cap(std::max<qint64>(0, capMs))
    , m_maxDoublings(std::clamp(maxDoublings, 0, 62))
{ }

qint64 Backoff::next()
{
    // Doubling stops at the cap; a wait above half the cap goes straight to it, so nothing overflows.
    qint64 wait = m_base;
    for (int i = 0; i < std::min(m_taken, m_maxDoublings) && wait < m_cap; ++i)
        wait = wait > m_cap / 2 ? m_cap : wait * 2;
    ++m_taken;
    return std::min(wait, m_cap);
}

void Backoff::reset()
{
    m_taken = 0;
}

} // namespace ak
