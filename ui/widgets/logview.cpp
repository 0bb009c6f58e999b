#include "widgets/logview.h"

#include <QDateTime>
#include <QFontDatabase>
#include <QScrollBar>

namespace ak {

LogView::LogView(QWidget *parent)
    : QPlainTextEdit(parent)
{
    setObjectName(QStringLiteral("LogView"));
    setReadOnly(true);
    setMaximumBlockCount(MaxLines);
    setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    setPlaceholderText(tr("Messages from loading runs and from the optimisation loop appear here."));
}

void LogView::appendMessage(Level level, const QString &text)
{
    // Follow the tail only when the reader is already at the bottom.
    QScrollBar *bar = verticalScrollBar();
    const bool atEnd = bar->value() == bar->maximum();
    const QString prefix = level == Level::Error ? tr("error: ")
        : level == Level::Warning                ? tr("warning: ")
                                                 : QString();
    const QString time = QTime::currentTime().toString(QStringLiteral("HH:mm:ss"));
    for (const QString &line : text.split(QLatin1Char('\n')))
        appendPlainText(QStringLiteral("%1  %2%3").arg(time, prefix, line));
    if (atEnd)
        bar->setValue(bar->maximum());
}

} // namespace ak
