#pragma once

#include <QString>

namespace ak {

// Whether this window may write the run it opens, found out up front instead of by the first steering
// action failing in the log. A run is read-only when it is marked so (a shipped recording opened as an
// example, RunStore::ReadOnlyMarker), owned by another user (writing would leave files of ours in it,
// and git refuses another user's repository), or when its folder or .git cannot take a new file (read-only
// disk, permissions). Checked by creating a file, not by the permission bits alone: root ignores those.
struct RunAccess
{
    QString readOnlyWhy; // empty: writable
    QString whatToDo; // for the banner: how to get a run that can be written

    bool readOnly() const { return !readOnlyWhy.isEmpty(); }
    // A folder that does not exist (yet) is not judged: nothing to say about it.
    static RunAccess check(const QString &dir);
    // Creates and removes a file in `dir`; false with the system's reason when it cannot.
    static bool canCreateFileIn(const QString &dir, QString *error);
};

} // namespace ak
