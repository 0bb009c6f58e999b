#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QVector>

#include <cmath>
#include <utility>

namespace ak {

// hotspot's HashModel idea: the QAbstractTableModel boilerplate written once. A subclass gives the
// column count, one cell function, one header function and a stable key per row.
//
// setRows() is the only way data changes, and it does the least disruptive thing (GammaRay's
// TimerModel): same keys in the same order -> one dataChanged per contiguous range of changed rows;
// old keys a prefix of the new ones (a live run appended experiments) -> rows inserted at the end plus
// dataChanged; anything else (a new profile, a different run) -> one reset. Selections, scroll
// positions and sort survive live updates.
template<typename Row>
class RowTableModel : public QAbstractTableModel
{
public:
    using QAbstractTableModel::QAbstractTableModel;

    int rowCount(const QModelIndex &parent = {}) const override
    {
        return parent.isValid() ? 0 : int(m_rows.size());
    }
    int columnCount(const QModelIndex &parent = {}) const override
    {
        return parent.isValid() ? 0 : columns();
    }

    QVariant data(const QModelIndex &index, int role) const override
    {
        if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
            return {};
        return cell(m_rows.at(index.row()), index.column(), role);
    }

    QVariant headerData(int section, Qt::Orientation orientation, int role) const override
    {
        if (orientation != Qt::Horizontal || section < 0 || section >= columns())
            return QAbstractTableModel::headerData(section, orientation, role);
        return header(section, role);
    }

    const QVector<Row> &rows() const { return m_rows; }
    const Row &rowAt(int row) const { return m_rows.at(row); }

    // Live update of the same data set. Returns true when it had to reset anyway.
    bool setRows(QVector<Row> rows)
    {
        rowsArriving(rows);
        const int oldCount = int(m_rows.size());
        bool prefix = rows.size() >= oldCount;
        for (int i = 0; prefix && i < oldCount; ++i)
            prefix = key(m_rows.at(i)) == key(rows.at(i));
        if (!prefix) {
            resetRows(std::move(rows));
            return true;
        }
        int first = -1;
        for (int i = 0; i <= oldCount; ++i) {
            const bool changed = i < oldCount && !sameRow(m_rows.at(i), rows.at(i));
            if (changed && first < 0)
                first = i;
            if (!changed && first >= 0) {
                for (int k = first; k < i; ++k)
                    m_rows[k] = rows.at(k);
                Q_EMIT dataChanged(index(first, 0), index(i - 1, columns() - 1));
                first = -1;
            }
        }
        if (rows.size() > oldCount) {
            beginInsertRows({}, oldCount, int(rows.size()) - 1);
            m_rows = std::move(rows);
            endInsertRows();
        } else {
            m_rows = std::move(rows);
        }
        return false;
    }

    // A whole new data set (another run, a new profile): one reset.
    void resetRows(QVector<Row> rows)
    {
        beginResetModel();
        m_rows.clear(); // nothing shown to re-signal: a reset repaints all
        rowsArriving(rows);
        m_rows = std::move(rows);
        endResetModel();
    }

protected:
    virtual int columns() const = 0;
    virtual QVariant cell(const Row &row, int column, int role) const = 0;
    virtual QVariant header(int column, int role) const = 0;
    // Identity of a row across updates (kernel folder, experiment id).
    virtual QString key(const Row &row) const = 0;
    // Whether a row shows the same as before. By default every cell of every role is compared, which
    // formats them all; a model whose cells are a pure function of its row compares the rows instead
    // (a 10k-experiment list: 160 ms of the GUI thread per live update, against under 1 ms).
    virtual bool sameRow(const Row &a, const Row &b) const { return sameCells(a, b); }
    // Called with the new rows before they replace the old ones, for what a cell reads beyond its own
    // row (every experiment's kernel baseline). A subclass whose such state changes signals the old
    // rows it affects itself; sameRow does not see it.
    virtual void rowsArriving(const QVector<Row> &rows) { Q_UNUSED(rows); }

private:
    bool sameCells(const Row &a, const Row &b) const
    {
        static const int roles[]
            = { Qt::DisplayRole, Qt::UserRole, Qt::ToolTipRole, Qt::ForegroundRole, Qt::DecorationRole };
        for (int c = 0; c < columns(); ++c)
            for (int role : roles)
                if (!sameValue(cell(a, c, role), cell(b, c, role)))
                    return false;
        return true;
    }

    // A raw "not measured" (NaN) is unequal to itself; unchanged rows must still compare equal.
    static bool sameValue(const QVariant &a, const QVariant &b)
    {
        if (a.typeId() == QMetaType::Double && b.typeId() == QMetaType::Double && std::isnan(a.toDouble()))
            return std::isnan(b.toDouble());
        return a == b;
    }

    QVector<Row> m_rows;
};

} // namespace ak
