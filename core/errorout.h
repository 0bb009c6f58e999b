#pragma once

#include <QString>

namespace ak {

// The house convention for `QString *error` out-parameters: set it when the caller asked for it and
// return false, so `return fail(error, "...")` reads as one statement.
inline bool fail(QString *error, const QString &message)
{
    if (error)
        *error = message;
    return false;
}

} // namespace ak
