#pragma once

#include "deviceinfo.h"

#include <QByteArray>
#include <QHash>
#include <QString>
#include <QStringList>
#include <QVector>

#include <array>

namespace ak {

// The GPUs the product knows by name (resources/gpus.json, compiled in as :/autokernel/gpus.json),
// and the per-SM throughput table used to estimate GPUs it does not know.
class GpuDatabase
{
public:
    struct Entry
    {
        QString key; // "h200"
        QString name; // "NVIDIA H200 SXM 141GB"
        QString vendor; // "nvidia" | "amd"
        QString arch; // compute capability "9.0" or "gfx942"
        QVector<QStringList> aliases; // each alias as normalised tokens
        int smCount = 0;
        double boostClockMHz = 0;
        double memoryGiB = 0;
        int memoryBusBits = 0;
        double bandwidthGBs = 0;
        double l2MiB = 0;
        std::array<double, int(Precision::Count)> peakTflops {};
        QString source;
    };

    // The compiled-in database, loaded once. Check isValid(): a broken resource is a build bug.
    static const GpuDatabase &builtin();

    // Parses gpus.json text; on failure returns false and sets *error ("gpus[3].peak_tflops.bf16: ...").
    bool load(const QByteArray &json, QString *error = nullptr);
    bool isValid() const { return m_valid; }
    QString error() const { return m_error; }

    const QVector<Entry> &entries() const { return m_entries; }
    const Entry *byKey(const QString &key) const;

    // Finds the entry a device name describes ("NVIDIA H200 NVL", "NVIDIA A100-SXM4-80GB"). Every
    // token of some alias must occur in the name, and every variant word in the name (NVL, PCIe, Ti,
    // SUPER...) must be part of that alias, so a variant never falls back to its sibling's numbers.
    // The alias with most tokens wins. Returns nullptr when no entry fits.
    const Entry *lookup(const QString &deviceName) const;

    // Lower-case alphanumeric tokens, vendor words dropped ("NVIDIA GeForce RTX 4090" -> rtx 4090).
    static QStringList tokens(const QString &deviceName);

    // Peak DRAM bandwidth in GB/s from the bus width and the memory clock NVML / the CUDA driver report
    // (double data rate): 6016 bit x 3201 MHz x 2 / 8 = 4814 GB/s on an H200.
    static double bandwidthFromBus(int busBits, double memoryClockMHz);

    // Fills a detected device's numbers: from the matching entry when the name is known (measured
    // fields the detector read, such as SM count and clocks, are kept), otherwise estimated from SM
    // count x per-SM throughput for its compute capability x clock and from the bus. Sets
    // databaseKey, estimated and note.
    DeviceInfo complete(DeviceInfo device) const;

    // Dense FLOP per clock per SM (or CU) for an architecture ("9.0", "gfx942"); nullptr if unknown.
    const std::array<double, int(Precision::Count)> *perSmFlops(const QString &arch) const;

    // The device an entry describes, as if detected (detectedBy "database").
    static DeviceInfo toDevice(const Entry &entry);

private:
    bool fail(const QString &message, QString *error);

    QVector<Entry> m_entries;
    QStringList m_variantTokens;
    QHash<QString, std::array<double, int(Precision::Count)>> m_perSm;
    bool m_valid = false;
    QString m_error;
};

} // namespace ak
