#include "runstatuslabels.h"

#include "widgets/devicestatus.h"

#include <QLabel>
#include <QWidget>

#include <algorithm>

namespace ak {

RunStatusLabels::RunStatusLabels(QWidget *window)
    : QObject(window)
    , m_runDevice(new QLabel(window))
    , m_reviewMode(new QLabel(window))
{
    // Tests and style sheets find the labels by these names.
    m_runDevice->setObjectName(QStringLiteral("RunDeviceLabel"));
    m_runDevice->setContentsMargins(0, 0, 16, 0);
    m_runDevice->hide();
    m_reviewMode->setObjectName(QStringLiteral("ReviewModeLabel"));
    m_reviewMode->setContentsMargins(0, 0, 16, 0);
    m_reviewMode->hide();
}

void RunStatusLabels::showRun(const RunSnapshot &snapshot)
{
    const DeviceInfo &d = snapshot.config.device;
    m_runDevice->setText(tr("Run device: %1").arg(d.name.isEmpty() ? tr("not recorded") : d.summary()));
    m_runDevice->setToolTip(DeviceStatus::tooltipFor(d));
    // The roofs % of roof is against (#43): measured on the device, the spec ones in the summary.
    if (d.measured.known()) {
        m_runDevice->setText(m_runDevice->text() + tr(" · measured roofs: %1").arg(d.measured.summary()));
        m_runDevice->setToolTip(m_runDevice->toolTip()
            + tr("\n\n% of roof is against what this device measurably does: %1 (a large copy's bandwidth, "
                 "the best torch.matmul). The spec sheet's roofs are above; both are shown beside each % of "
                 "roof.")
                  .arg(d.measured.summary()));
    }
    m_runDevice->show();

    if (!snapshot.reviewMode) {
        m_reviewMode->hide();
        return;
    }
    const auto pending = std::count_if(snapshot.experiments.cbegin(), snapshot.experiments.cend(),
        [](const Experiment &e) { return e.status == ExperimentStatus::Pending; });
    m_reviewMode->setText(
        pending == 0 ? tr("Review mode") : tr("Review mode: %1 waiting for you").arg(pending));
    m_reviewMode->setToolTip(
        QStringLiteral("Review mode is on: a would-be keep is recorded as pending and waits until "
                       "you accept or reject it (select it in the commit list).\n"
                       "Loop ▸ Review Mode switches it off."));
    m_reviewMode->show();
}

} // namespace ak
