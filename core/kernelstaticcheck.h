#pragma once

#include "kernelstaticinfo.h"

#include <QByteArray>
#include <QMap>
#include <QString>

namespace ak {

// Static checks of a kernel.py through the embedded Python interpreter. Only `ast` is used: the
// source is parsed, never imported or executed, so a kernel that runs code at import (or imports
// torch) costs nothing here and can do no harm. Every function is safe to call from any thread;
// the interpreter starts on first use (once per process) and each call holds the GIL only while it
// runs.

// Parses `source` and fills KernelStaticInfo. `fileName` only labels errors ("kernel.py:12: ...").
// ok is false when the file does not parse, KERNEL_TYPE is missing or not a string literal,
// kernel_fn is not a module-level def, or TUNE_SPACE is malformed / names a non-tunable constant.
KernelStaticInfo checkKernelSource(
    const QByteArray &source, const QString &fileName = QStringLiteral("kernel.py"));

// Returns `source` with the literal values of the named tunable constants replaced; every other byte
// (comments, spacing, line endings) is unchanged. An integer constant only accepts integral values.
// On error (a name that is not a tunable constant, a non-integral value for an int, a source that
// does not parse) returns an empty QByteArray and sets *error.
QByteArray rewriteConstants(
    const QByteArray &source, const QMap<QString, double> &values, QString *error = nullptr);

// Whether a proposed kernel.py may replace the current one: it passed its own static check, keeps
// KERNEL_TYPE, kernel_fn's parameter names (in order) and the values of TEST_SIZES, TOLERANCES and
// TEST_DTYPES (formatting aside). Returns an empty string when it may,
// otherwise the reason (one line).
QString validateProposal(const KernelStaticInfo &oldInfo, const KernelStaticInfo &newInfo);

// "3.11.2" when the embedded interpreter started, otherwise the reason it did not.
QString embeddedPythonStatus();

} // namespace ak
