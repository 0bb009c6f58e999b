#pragma once

#include "deviceinfo.h"
#include "experiment.h"
#include "kernelrecord.h"

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

#include <memory>

namespace ak {

// The whole in-memory model of a run directory, as the loader builds it. Immutable once built and
// shared between threads through RunSnapshotPtr (heaptrack's shared_ptr<const Result> pattern).
struct RunSnapshot
{
    QString runDir;
    QString model;                  // model name or path the run was profiled from
    DeviceInfo device;
    QVector<KernelRecord> kernels;  // in rank order
    QVector<Experiment> experiments; // in id order
    QStringList warnings;           // load problems that did not stop the load ("experiments.jsonl:12: ...")
};

using RunSnapshotPtr = std::shared_ptr<const RunSnapshot>;

} // namespace ak

Q_DECLARE_METATYPE(ak::RunSnapshotPtr)
