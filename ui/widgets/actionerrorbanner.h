#pragma once

#include <QLabel>

namespace ak {

// The strip under the toolbar that says a window action failed (Pin, Skip, Restore, Start, a New
// Run…), where the user looks: before #41 such errors went to the log dock and a status-bar message
// that vanished after ten seconds. Stays until dismissed, replaced by the next error, or cleared when
// an action succeeds or another run is opened.
class ActionErrorBanner : public QLabel
{
    Q_OBJECT
public:
    explicit ActionErrorBanner(QWidget *parent = nullptr);

    // "Pin failed: kernel 02-softmax is already pinned" with a Dismiss link; shown.
    void showError(const QString &action, const QString &error);
    void clear(); // hidden
    QString error() const { return m_error; } // the last error shown, empty when hidden

private:
    QString m_error;
};

} // namespace ak
