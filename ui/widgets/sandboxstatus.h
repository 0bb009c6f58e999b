#pragma once

#include <QLabel>

namespace ak {

struct RunSnapshot;

// Status bar label: where the open run's kernels were judged. A run whose latest benchmark ran
// without bubblewrap says so in red, with the reason; runs recorded before the sandbox show nothing.
class SandboxStatus : public QLabel
{
    Q_OBJECT
public:
    explicit SandboxStatus(QWidget *parent = nullptr);

    void showRun(const RunSnapshot &snapshot);

    // The latest sandbox an experiment of the run recorded ("" when none did).
    static QString latestSandbox(const RunSnapshot &snapshot);
};

} // namespace ak
