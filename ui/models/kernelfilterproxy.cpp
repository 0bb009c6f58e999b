#include "models/kernelfilterproxy.h"

#include "models/kerneltablemodel.h"

#include <cmath>

namespace ak {

KernelFilterProxy::KernelFilterProxy(QObject *parent)
    : QSortFilterProxyModel(parent)
{
    setSortRole(KernelTableModel::SortRole);
    setDynamicSortFilter(true);
    m_debounce.setSingleShot(true);
    m_debounce.setInterval(DebounceMs);
    connect(&m_debounce, &QTimer::timeout, this, &KernelFilterProxy::applySearchNow);
}

void KernelFilterProxy::setSearchText(const QString &text)
{
    m_pending = text.trimmed();
    m_debounce.start();
}

void KernelFilterProxy::applySearchNow()
{
    m_debounce.stop();
    if (m_pending == m_active)
        return;
    m_active = m_pending;
    invalidateFilter();
}

bool KernelFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (m_active.isEmpty())
        return true;
    static const int searched[] = { KernelTableModel::KernelColumn, KernelTableModel::OpColumn,
        KernelTableModel::ShapesColumn, KernelTableModel::DtypeColumn, KernelTableModel::StateColumn };
    // Every word must match some column: "softmax bf16" narrows, it does not widen.
    const QStringList words = m_active.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    for (const QString &word : words) {
        bool found = false;
        for (int column : searched) {
            const QModelIndex idx = sourceModel()->index(sourceRow, column, sourceParent);
            if (idx.data(Qt::DisplayRole).toString().contains(word, Qt::CaseInsensitive)) {
                found = true;
                break;
            }
        }
        if (!found)
            return false;
    }
    return true;
}

bool KernelFilterProxy::lessThan(const QModelIndex &left, const QModelIndex &right) const
{
    const QVariant l = left.data(sortRole());
    const QVariant r = right.data(sortRole());
    if (l.typeId() == QMetaType::Double && r.typeId() == QMetaType::Double) {
        const double a = l.toDouble();
        const double b = r.toDouble();
        if (std::isnan(a) || std::isnan(b))
            return std::isnan(a) && !std::isnan(b);
        return a < b;
    }
    return QSortFilterProxyModel::lessThan(left, right);
}

} // namespace ak
