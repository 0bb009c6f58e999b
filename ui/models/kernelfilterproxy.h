#pragma once

#include <QSortFilterProxyModel>
#include <QTimer>

namespace ak {

// Sorts the kernel table by raw values (SortRole) and filters it by a search text that matches the
// kernel name, op type, shapes or dtype; a NaN sort value (not measured) sorts below every number. The search
// is debounced: typing restarts a 300 ms timer so a long table is filtered once per pause, not once per key.
class KernelFilterProxy : public QSortFilterProxyModel
{
    Q_OBJECT
public:
    static constexpr int DebounceMs = 300;

    explicit KernelFilterProxy(QObject *parent = nullptr);

    // Debounced; the filter changes DebounceMs after the last call.
    void setSearchText(const QString &text);
    // Applies a pending search now (tests, Return key).
    void applySearchNow();
    QString activeSearch() const { return m_active; }

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex &sourceParent) const override;
    // A raw NaN ("not measured") sorts below every number; QVariant leaves it unordered, which
    // would scatter such rows through the table.
    bool lessThan(const QModelIndex &left, const QModelIndex &right) const override;

private:
    QTimer m_debounce;
    QString m_pending;
    QString m_active;
};

} // namespace ak
