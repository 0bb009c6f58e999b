#include "widgets/diffeditor.h"

#include <QMouseEvent>
#include <QPainter>
#include <QTextBlock>

namespace ak {

namespace {
constexpr int kPadding = 4; // pixels either side of each number column
}

// The gutter is a child widget in the editor's left viewport margin (Qt's code editor example):
// the editor scrolls it by repainting, so it needs no scroll bar of its own.
class DiffEditor::Gutter : public QWidget
{
public:
    explicit Gutter(DiffEditor *editor)
        : QWidget(editor)
        , m_editor(editor)
    { }
    QSize sizeHint() const override { return { m_editor->gutterWidth(), 0 }; }

protected:
    void paintEvent(QPaintEvent *event) override { m_editor->paintGutter(event); }

private:
    DiffEditor *m_editor;
};

DiffEditor::DiffEditor(QWidget *parent)
    : QPlainTextEdit(parent)
    , m_gutter(new Gutter(this))
{
    setReadOnly(true);
    setLineWrapMode(QPlainTextEdit::NoWrap);
    connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect &rect, int dy) {
        if (dy != 0)
            m_gutter->scroll(0, dy);
        else
            m_gutter->update(0, rect.y(), m_gutter->width(), rect.height());
    });
    setViewportMargins(gutterWidth(), 0, 0, 0);
}

void DiffEditor::setLineNumbers(const QVector<QVector<int>> &columns)
{
    m_columns = columns;
    setViewportMargins(gutterWidth(), 0, 0, 0);
    const QRect cr = contentsRect();
    m_gutter->setGeometry(QRect(cr.left(), cr.top(), gutterWidth(), cr.height()));
    m_gutter->update();
}

int DiffEditor::columnWidth(int column) const
{
    int widest = 0;
    for (int n : m_columns.at(column))
        widest = std::max(widest, n);
    const int digits = std::max(2, int(QString::number(widest).size()));
    return fontMetrics().horizontalAdvance(QLatin1Char('9')) * digits + 2 * kPadding;
}

int DiffEditor::gutterWidth() const
{
    int width = 0;
    for (int c = 0; c < m_columns.size(); ++c)
        width += columnWidth(c);
    return width;
}

QString DiffEditor::gutterText(int block) const
{
    QStringList parts;
    for (const QVector<int> &column : m_columns) {
        const int n = block >= 0 && block < column.size() ? column.at(block) : 0;
        parts << (n > 0 ? QString::number(n) : QString());
    }
    return parts.join(QLatin1Char(' '));
}

void DiffEditor::resizeEvent(QResizeEvent *event)
{
    QPlainTextEdit::resizeEvent(event);
    const QRect cr = contentsRect();
    m_gutter->setGeometry(QRect(cr.left(), cr.top(), gutterWidth(), cr.height()));
}

void DiffEditor::mousePressEvent(QMouseEvent *event)
{
    QPlainTextEdit::mousePressEvent(event);
    if (event->button() == Qt::LeftButton)
        Q_EMIT blockClicked(cursorForPosition(event->pos()).blockNumber());
}

void DiffEditor::paintGutter(QPaintEvent *event)
{
    QPainter painter(m_gutter);
    // From the palette, so the gutter reads on light and dark themes alike.
    const QPalette pal = palette();
    painter.fillRect(event->rect(), pal.color(QPalette::AlternateBase));
    painter.setPen(pal.color(QPalette::PlaceholderText));
    painter.setFont(font());
    const int lineHeight = fontMetrics().height();
    QTextBlock block = firstVisibleBlock();
    int top = qRound(blockBoundingGeometry(block).translated(contentOffset()).top());
    while (block.isValid() && top <= event->rect().bottom()) {
        const int bottom = top + qRound(blockBoundingRect(block).height());
        if (block.isVisible() && bottom >= event->rect().top()) {
            int x = 0;
            for (int c = 0; c < m_columns.size(); ++c) {
                const int w = columnWidth(c);
                const QVector<int> &column = m_columns.at(c);
                const int n = block.blockNumber() < column.size() ? column.at(block.blockNumber()) : 0;
                if (n > 0)
                    painter.drawText(x, top, w - kPadding, lineHeight, Qt::AlignRight, QString::number(n));
                x += w;
            }
        }
        block = block.next();
        top = bottom;
    }
}

} // namespace ak
