#include "models/experimentfilterproxy.h"

#include "experiment.h"
#include "models/experimentmodel.h"

namespace ak {

ExperimentFilterProxy::ExperimentFilterProxy(QObject *parent)
    : QSortFilterProxyModel(parent)
{ }

void ExperimentFilterProxy::setPendingOnly(bool on)
{
    if (on == m_pendingOnly)
        return;
    m_pendingOnly = on;
    invalidateFilter();
}

bool ExperimentFilterProxy::filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const
{
    if (!m_pendingOnly)
        return QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent);
    const QModelIndex index = sourceModel()->index(sourceRow, 0, sourceParent);
    return index.data(ExperimentModel::StatusRole).toInt() == int(ExperimentStatus::Pending);
}

} // namespace ak
