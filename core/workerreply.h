#pragma once

#include <QMetaType>
#include <QString>

#include <nlohmann/json.hpp>

namespace ak {

// The outcome of one worker request, by value: it crosses threads in a queued signal.
struct WorkerReply
{
    enum class Status {
        Ok, // the handler returned; `result` holds what it returned
        Error, // the handler raised; `error` (one line) and `traceback` say why
        Timeout, // no reply within the limit; the worker was killed and will be restarted
        Crash, // the worker died, or reported a CUDA fault (`fatal`); it will be restarted
        Cancelled, // cancel() was called; the worker was killed
        Unavailable, // the worker could not be started (interpreter missing, no ready line)
    };

    Status status = Status::Crash;
    nlohmann::json result; // Ok only; an object
    QString error; // one line; empty when Ok
    QString traceback; // Python traceback for Error (and fatal Crash)
    QString stderrTail; // what the worker wrote to stderr during the request (last 16 KiB)
    bool fatal = false; // the worker reported a CUDA fault: its process could not be trusted again
    double seconds = 0; // wall time from sending the request to its end

    bool ok() const { return status == Status::Ok; }
    static QString statusName(Status s); // "ok", "error", "timeout", "crash", "cancelled", "unavailable"
};

} // namespace ak

Q_DECLARE_METATYPE(ak::WorkerReply)
