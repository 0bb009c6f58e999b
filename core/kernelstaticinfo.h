#pragma once

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVector>

namespace ak {

// A module-level constant of kernel.py that a tuner may change, e.g. `BLOCK_SIZE = 1024`.
// Tunable: an UPPER_CASE name bound to an int or float literal, other than the contract names
// (KERNEL_TYPE, TEST_SIZES, TOLERANCES, TEST_DTYPES). Candidate values come from an optional
// module-level `TUNE_SPACE = {"BLOCK_SIZE": [256, 512, 1024], ...}`.
struct TunableConstant
{
    QString name;
    double value = 0;
    bool isInteger = true;
    int line = 0; // 1-based line of the assignment
    QVector<double> candidates; // from TUNE_SPACE; empty = tuner picks (powers of two around value)
};

// What the embedded Python's static check learns from a kernel.py without importing it.
struct KernelStaticInfo
{
    bool ok = false;
    QString error; // "kernel.py:12: invalid syntax", "kernel_fn is missing", ...
    int errorLine = 0;
    QString kernelType; // value of KERNEL_TYPE
    QStringList kernelFnArgs; // parameter names of kernel_fn
    QVector<TunableConstant> constants;
    // TEST_SIZES / TOLERANCES / TEST_DTYPES as syntax trees (formatting-independent); a proposal that
    // changes them (looser tolerances, fewer sizes) is rejected by validateProposal.
    QString contract;
};

} // namespace ak

Q_DECLARE_METATYPE(ak::KernelStaticInfo)
