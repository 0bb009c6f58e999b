#include "models/costdelegate.h"

#include <QPainter>

#include <cmath>

namespace ak {

CostDelegate::CostDelegate(int valueRole, int totalRole, QObject *parent)
    : QStyledItemDelegate(parent)
    , m_valueRole(valueRole)
    , m_totalRole(totalRole)
{ }

double CostDelegate::fraction(double value, double total)
{
    if (std::isnan(value) || std::isnan(total) || total <= 0 || value <= 0)
        return 0;
    return std::min(1.0, value / total);
}

void CostDelegate::paint(
    QPainter *painter, const QStyleOptionViewItem &option, const QModelIndex &index) const
{
    const QVariant total = index.data(m_totalRole);
    if (total.isValid()) {
        const double f = fraction(index.data(m_valueRole).toDouble(), total.toDouble());
        if (f > 0) {
            QColor bar = option.palette.color(QPalette::Highlight);
            bar.setAlpha(90);
            QRect r = option.rect.adjusted(1, 2, -1, -2);
            r.setWidth(std::max(1, int(std::round(r.width() * f))));
            painter->fillRect(r, bar);
        }
    }
    QStyledItemDelegate::paint(painter, option, index);
}

} // namespace ak
