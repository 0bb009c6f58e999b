#pragma once

#include "agents/tunememory.h"

#include <QString>
#include <QVector>
#include <QWidget>

#include <functional>

class QLabel;
class QPushButton;

namespace ak {

// The tune page's line about TuneMemory in Loop ▸ Agent…: how many configurations earlier runs on this
// machine kept, from how many runs, on which devices, and the file; "Forget…" clears it after a
// question. The window is a desktop user's only way to see or forget the memory (the CLI has
// `autokernel-cli tune-memory`). The file is read by refresh() only — once when the dialog opens and
// after Forget — never on a loop's or the window's hot path.
class TuneMemoryRow : public QWidget
{
    Q_OBJECT
public:
    // Asked before forgetting; true goes ahead. Injectable so that tests answer without a modal box.
    using Confirm = std::function<bool(const QString &question)>;

    explicit TuneMemoryRow(QWidget *parent = nullptr);

    // Reads the file again and updates the line and the button.
    void refresh();
    // Asks (Confirm), then TuneMemory::clear(); a failure is shown under the line.
    void forget();
    void setConfirm(Confirm confirm) { m_confirm = std::move(confirm); }

    // "Tune memory: 37 configurations from 5 runs on this machine (…) — path"; "Tune memory: empty — …".
    static QString summary(const QVector<TuneMemory::Entry> &entries, const QString &path);

    QLabel *summaryLabel() const { return m_summary; }
    QPushButton *forgetButton() const { return m_forget; }
    QString errorText() const; // why the last Forget failed; empty when it did not

Q_SIGNALS:
    // The row's height may have changed (the error shown or hidden): the dialog fits itself again.
    void resized();

private:
    QLabel *m_summary;
    QPushButton *m_forget;
    QLabel *m_error;
    Confirm m_confirm;
    int m_count = 0; // entries read by the last refresh, for the question
};

} // namespace ak
