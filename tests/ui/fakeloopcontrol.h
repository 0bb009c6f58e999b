#pragma once

#include "loopcontrol.h"

#include <QStringList>

// Records every request; state and capabilities are set by the test.
class FakeLoopControl : public ak::LoopControl
{
    Q_OBJECT
public:
    explicit FakeLoopControl(Capabilities caps, QObject *parent = nullptr)
        : LoopControl(parent)
        , m_caps(caps)
    { }

    Capabilities capabilities() const override { return m_caps; }
    State state() const override { return m_state; }
    QString description() const override { return QStringLiteral("fake loop"); }
    void setState(State s)
    {
        m_state = s;
        Q_EMIT stateChanged(s);
    }

    void start() override
    {
        calls << QStringLiteral("start");
        Q_EMIT startCalled();
    }
    void pause() override { calls << QStringLiteral("pause"); }
    void resume() override { calls << QStringLiteral("resume"); }
    void stop() override { calls << QStringLiteral("stop"); }
    void pin(const QString &k) override { calls << QStringLiteral("pin ") + k; }
    void unpin(const QString &k) override { calls << QStringLiteral("unpin ") + k; }
    void skip(const QString &k) override { calls << QStringLiteral("skip ") + k; }
    void revert(const QString &k, int id) override { calls << QStringLiteral("revert %1 %2").arg(k).arg(id); }
    void accept(int id) override { calls << QStringLiteral("accept %1").arg(id); }
    void reject(int id) override { calls << QStringLiteral("reject %1").arg(id); }

    QStringList calls;

Q_SIGNALS:
    void startCalled(); // lets a test react the way an implementation would (e.g. fail the start)

private:
    Capabilities m_caps;
    State m_state = State::Stopped;
};
