#pragma once

#include <QPlainTextEdit>
#include <QVector>

namespace ak {

// A read-only QPlainTextEdit with a line-number gutter on its left, as Qt Creator's diff editors
// have. The numbers are not the block numbers: a diff shows padding rows (no number) on one side and
// both old and new numbers in unified mode, so each block's numbers are given, one column each.
class DiffEditor : public QPlainTextEdit
{
    Q_OBJECT
public:
    explicit DiffEditor(QWidget *parent = nullptr);

    // One vector per gutter column (one side-by-side, two unified: old then new), one entry per
    // block; 0 shows no number. Columns are sized to their widest number.
    void setLineNumbers(const QVector<QVector<int>> &columns);
    const QVector<QVector<int>> &lineNumbers() const { return m_columns; }
    // What the gutter paints for a block, columns separated by a space (tests, accessibility).
    QString gutterText(int block) const;
    int gutterWidth() const;

Q_SIGNALS:
    // A left click on a line (the diff view expands folded rows with it).
    void blockClicked(int block);

protected:
    void resizeEvent(QResizeEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;

private:
    class Gutter;
    void paintGutter(QPaintEvent *event);
    int columnWidth(int column) const;

    Gutter *m_gutter;
    QVector<QVector<int>> m_columns;
};

} // namespace ak
