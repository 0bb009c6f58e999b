#include "widgets/actionerrorbanner.h"

namespace ak {

ActionErrorBanner::ActionErrorBanner(QWidget *parent)
    : QLabel(parent)
{
    setObjectName(QStringLiteral("ActionErrorBanner"));
    setWordWrap(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::LinksAccessibleByMouse);
    setAutoFillBackground(true);
    setBackgroundRole(QPalette::ToolTipBase); // the read-only banner's colours: readable on any palette
    setForegroundRole(QPalette::ToolTipText);
    setContentsMargins(8, 6, 8, 6);
    connect(this, &QLabel::linkActivated, this, [this] { clear(); });
    hide();
}

void ActionErrorBanner::showError(const QString &action, const QString &error)
{
    m_error = error;
    setText(tr("<b>%1 failed</b> — %2 &nbsp; <a href=\"dismiss\">Dismiss</a>")
                .arg(action.toHtmlEscaped(), error.toHtmlEscaped()));
    show();
}

void ActionErrorBanner::clear()
{
    m_error.clear();
    hide();
}

} // namespace ak
