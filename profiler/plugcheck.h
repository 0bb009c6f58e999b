#pragma once

#include "kernelrecord.h"
#include "profilereport.h"

#include <QByteArray>
#include <QStringList>

#include <vector>

namespace ak {

class WorkerClient;

// One new kernel folder before it enters the run: its record (the contract is updated in place),
// its starter kernel.py and the modules it is to run in.
struct PlugCandidate
{
    KernelRecord *record = nullptr;
    QByteArray kernelPy;
    QStringList sites;
};

// The plug-check (#38): before the loop spends anything on a folder, its starter is plugged into the
// model (the worker's `plugcheck` op, agent/python/modelplug/plugcheck.py) and every site must route
// its calls, with no fallback and with parity. A folder that cannot be plugged gets the reason in
// `contract.refused`, which makes it "not pluggable" in the run: no experiments, shown with its reason.
class PlugCheck
{
public:
    // Blocking. Candidates already refused by their contract are not sent. A worker without the op, or a
    // check that fails as a whole, refuses nothing and says so in `notes` (the loop then runs as before).
    static void run(WorkerClient &worker, const ProfileReport &report,
        const std::vector<PlugCandidate> &candidates, QStringList *notes, int timeoutMs = 600000);
};

} // namespace ak
