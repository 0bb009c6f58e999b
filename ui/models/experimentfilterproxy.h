#pragma once

#include <QSortFilterProxyModel>

namespace ak {

// The commit list's proxy: the selected kernel's experiments (a regular expression on
// ExperimentModel::KernelKeyRole), or, with Loop ▸ Show Pending Only, every kernel's experiments
// that wait for review — a review pass goes across kernels.
class ExperimentFilterProxy : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    explicit ExperimentFilterProxy(QObject *parent = nullptr);

    void setPendingOnly(bool on);
    bool pendingOnly() const { return m_pendingOnly; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;

private:
    bool m_pendingOnly = false;
};

} // namespace ak
