#pragma once

#include <QObject>
#include <QString>

class QAction;

namespace ak {

// Loop ▸ Measure Device Roofs: measures what this machine's device (its GPU, else its CPU) reaches
// (a large copy's bandwidth, the best matmul) with the interpreter a run would use, off the GUI
// thread, and stores it in the per-user cache the loops read (docs/numbers.md). A loop measures on
// a device's first use anyway; this measures again (a new clock setting, a busy machine then).
class RoofsAction : public QObject
{
    Q_OBJECT
public:
    explicit RoofsAction(QObject *parent = nullptr);

    QAction *action() const { return m_action; }
    void measure();

Q_SIGNALS:
    void measured(const QString &text); // "measured roofs of cuda (bf16): copy … (spec …)"
    void failed(const QString &text);

private:
    QAction *m_action;
};

} // namespace ak
