#pragma once

#include <QFutureWatcher>
#include <QObject>
#include <QThreadPool>
#include <QtConcurrent>

#include <utility>

namespace ak {

// Runs work() on the global thread pool (or `pool`: long jobs such as profiling a model get their own,
// so that loads and diffs are not queued behind them) and done(result) on context's thread once it finishes.
//
// Why not QFuture::then(context, ...): in Qt 6.4 it asserts when the context is destroyed before the
// work finishes (closing a window while a run loads), and it runs the continuation synchronously
// when the work is already done. A QFutureWatcher owned by context has neither problem: it dies
// with the context and always reports through the event loop. Callers still use a generation
// counter so that only the latest request's result is shown.
template<typename Work, typename Done>
void runInBackground(QThreadPool *pool, QObject *context, Work work, Done done)
{
    using Result = decltype(work());
    auto *watcher = new QFutureWatcher<Result>(context);
    QObject::connect(
        watcher, &QFutureWatcher<Result>::finished, context, [watcher, done = std::move(done)]() mutable {
            watcher->deleteLater();
            done(watcher->result());
        });
    watcher->setFuture(QtConcurrent::run(pool, std::move(work)));
}

template<typename Work, typename Done>
void runInBackground(QObject *context, Work work, Done done)
{
    runInBackground(QThreadPool::globalInstance(), context, std::move(work), std::move(done));
}

} // namespace ak
