#pragma once

#include <QStyledItemDelegate>

namespace ak {

// hotspot's CostDelegate: a bar behind the text whose length is value ÷ total, both read from the
// model (SortRole and TotalCostRole); cells without a total are drawn as plain text.
class CostDelegate : public QStyledItemDelegate
{
    Q_OBJECT
public:
    CostDelegate(int valueRole, int totalRole, QObject *parent = nullptr);

    // The filled fraction of the cell, clamped to [0, 1]; 0 for NaN, negative or missing totals.
    static double fraction(double value, double total);

    void paint(
        QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const override;

private:
    int m_valueRole;
    int m_totalRole;
};

} // namespace ak
