#pragma once

#include <QPlainTextEdit>

namespace ak {

// The log region: timestamped lines from loading runs, the watcher and the optimisation loop.
class LogView : public QPlainTextEdit
{
    Q_OBJECT
public:
    enum class Level { Info, Warning, Error };
    static constexpr int MaxLines = 5000; // older lines drop off; the run directory keeps the record

    explicit LogView(QWidget *parent = nullptr);

    void appendMessage(Level level, const QString &text);
};

} // namespace ak
