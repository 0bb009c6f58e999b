#include "widgets/sandboxstatus.h"

#include "runsnapshot.h"
#include "widgets/errortint.h"

namespace ak {

SandboxStatus::SandboxStatus(QWidget *parent)
    : QLabel(parent)
{
    setObjectName(QStringLiteral("SandboxLabel"));
    setContentsMargins(0, 0, 16, 0);
    hide();
}

QString SandboxStatus::latestSandbox(const RunSnapshot &snapshot)
{
    for (auto it = snapshot.experiments.crbegin(); it != snapshot.experiments.crend(); ++it)
        if (!it->metrics.sandbox.isEmpty())
            return it->metrics.sandbox;
    return QString();
}

void SandboxStatus::showRun(const RunSnapshot &snapshot)
{
    const QString sandbox = latestSandbox(snapshot);
    if (sandbox.isEmpty()) {
        hide();
        return;
    }
    const bool sandboxed = sandbox.startsWith(QLatin1String("bubblewrap"));
    // Unsandboxed kernels are a warning: in the error red, and bold.
    ErrorTint::apply(this, !sandboxed);
    QFont f = font();
    f.setBold(!sandboxed);
    setFont(f);
    if (sandboxed) {
        setText(tr("Sandbox: bubblewrap"));
        setToolTip(tr("Kernels run in a bubblewrap sandbox: their own process, no network, a read-only "
                      "file system, no API keys; the judge, the reference and the clocks live outside it."));
    } else {
        setText(tr("⚠ No sandbox"));
        setToolTip(tr("Kernels ran in their own process but without a sandbox: %1\n"
                      "They could read your files and reach the network. Install bubblewrap (apt install "
                      "bubblewrap) and restart the loop.")
                       .arg(sandbox));
    }
    show();
}

} // namespace ak
