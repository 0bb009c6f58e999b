#include "runsteering.h"

#include "requestqueue.h"
#include "runlock.h"
#include "runstore.h"

#include <QCoreApplication>

namespace ak {

RunSteering::Outcome RunSteering::steer(const QString &runDir, const SteerRequest &request, Writer writer)
{
    Outcome o;
    QString error;
    std::unique_ptr<RunStore> store;
    if (writer == Writer::Unknown)
        store = RunStore::open(runDir, &error);
    if (!store) {
        // Someone else writes the run (its loop): leave the request where that writer picks it up.
        const qint64 holder
            = writer == Writer::ThisProcess ? QCoreApplication::applicationPid() : RunLock::holderPid(runDir);
        if (holder == 0) {
            o.message = error;
            return o;
        }
        if (!RequestQueue::queue(runDir, request.toJson(), &error, &o.request)) {
            o.message = error;
            return o;
        }
        o.kind = Outcome::Kind::Queued;
        o.writer = holder;
        o.message = QStringLiteral(
            "queued for the writer of the run (pid %1), which applies it between experiments")
                        .arg(holder);
        return o;
    }
    o.repairNotes = store->repairNotes();
    const bool alreadySo
        = request.action() == SteerRequest::Action::Review && store->state().reviewMode == request.on();
    const bool ok = alreadySo || store->apply(request, &error, &o.created);
    o.state = store->snapshot();
    o.kind = ok ? Outcome::Kind::Applied : Outcome::Kind::Refused;
    if (!ok)
        o.message = error;
    return o;
}

} // namespace ak
