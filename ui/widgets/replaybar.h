#pragma once

#include "runsnapshot.h"

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

#include <memory>

class QComboBox;
class QLabel;
class QSlider;
class QToolButton;

namespace ak {

class RunReplay;

// View ▸ Replay Run: a finished (or running) run played back as it happened, for a demo or to see
// how an overnight run got where it is. A timeline to scrub, play and pause, a speed in experiments
// per second, and Back to Live. The run's log is read once in the background (RunReplay); each frame
// is a RunSnapshot that the window shows as it would a live one (frameShown). While a replay is open
// the window neither reloads nor steers: what it shows is the past.
class ReplayBar : public QWidget
{
    Q_OBJECT
public:
    explicit ReplayBar(QWidget *parent = nullptr);
    ~ReplayBar() override;

    // Reads `runDir` in the background; started() and the first frame follow, or failed().
    void start(const QString &runDir);
    // Back to Live: the replay ends (ended()).
    void stop();
    bool isActive() const { return m_replay != nullptr || m_loading; }
    int frame() const { return m_frame; }
    int frameCount() const;
    void seek(int frame);
    void play();
    void pause();
    bool isPlaying() const { return m_ticker.isActive(); }
    // Experiments per second while playing (one of speeds(), or any positive value).
    void setSpeed(double experimentsPerSecond);
    double speed() const { return m_speed; }
    static QVector<double> speeds();
    // What the position label says ("Experiment 12 of 240 · 1:02:03 into the run").
    QString positionText() const;

Q_SIGNALS:
    void started();
    void frameShown(const ak::RunSnapshotPtr &snapshot);
    void ended();
    void failed(const QString &error);

private:
    void tick();
    void showFrame(int frame);
    void updateControls();

    std::shared_ptr<RunReplay> m_replay;
    bool m_loading = false;
    quint64 m_generation = 0; // a load still running when the replay was stopped is dropped
    int m_frame = 0;
    double m_speed = 5.0;
    double m_carry = 0; // fractional frames owed by the ticker
    QTimer m_ticker;
    QElapsedTimer m_sinceTick;
    QToolButton *m_playButton;
    QSlider *m_timeline;
    QLabel *m_position;
    QComboBox *m_speedBox;
    QToolButton *m_live;
};

} // namespace ak
