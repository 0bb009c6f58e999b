#pragma once

#include "agents/tunespace.h"
#include "deviceinfo.h"
#include "kernelrecord.h"

#include <QDateTime>
#include <QString>
#include <QVector>

namespace ak {

// What the tune agent learnt in earlier runs on this machine: each kept configuration of a tunable
// kernel, by device, op type, dtype and shapes, in one JSON file in the user's cache folder
// (`$XDG_CACHE_HOME/autokernel/tune-memory.json`, or $AUTOKERNEL_TUNE_MEMORY). The loop remembers every
// keep; the next run's agent tries the best remembered configuration of the same device, op and
// dtype early (AgentContext::remembered), the same shapes first. `autokernel-cli tune-memory --clear`
// forgets it all; AUTOKERNEL_TUNE_MEMORY=none turns it off. Writers in several processes take a lock
// file.
class TuneMemory
{
public:
    struct Entry
    {
        QString device; // DeviceInfo::name
        QString opType;
        QString dtype;
        QString shapes; // shapesOf() the kernel
        TuneConfig config;
        double speedup = 0; // over PyTorch, when it was kept
        QDateTime when;
        QString runDir;
    };

    // The shapes part of an entry's key, the same for whoever remembers or recalls.
    static QString shapesOf(const KernelRecord &kernel) { return kernel.shapes.join(QStringLiteral(", ")); }
    // The file; empty when $AUTOKERNEL_TUNE_MEMORY is "none" (no memory: reproducible runs, tests).
    static QString path();
    // Records a kept configuration; the best per (device, op, dtype, shapes) is kept, at most
    // MaxEntries in all (the oldest go). False with `error` when the file cannot be written.
    static bool remember(const Entry &entry, QString *error = nullptr);
    // Entries of `device`, `opType` and `dtype` from other runs than `excludeRun`: those with `shapes`
    // first, then by speedup.
    static QVector<Entry> recall(const QString &device, const QString &opType, const QString &dtype,
        const QString &shapes, const QString &excludeRun);
    // The same selection from entries already read (a loop reads the file once).
    static QVector<Entry> select(const QVector<Entry> &entries, const QString &device, const QString &opType,
        const QString &dtype, const QString &shapes, const QString &excludeRun);
    static QVector<Entry> all();
    static bool clear(QString *error = nullptr);

    static constexpr int MaxEntries = 2000;
};

} // namespace ak
