#include "widgets/replaybar.h"

#include "runreplay.h"
#include "services/backgroundjob.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QStyle>
#include <QToolButton>

#include <cmath>

namespace ak {

namespace {
// Frames are shown at most this often, whatever the speed: a 10k-experiment run at 100 experiments
// per second would otherwise rebuild the table 100 times a second.
constexpr int kTickMs = 50;

QString clockText(double seconds)
{
    const auto s = qint64(std::llround(seconds));
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600)
        .arg((s / 60) % 60, 2, 10, QLatin1Char('0'))
        .arg(s % 60, 2, 10, QLatin1Char('0'));
}
} // namespace

ReplayBar::ReplayBar(QWidget *parent)
    : QWidget(parent)
    , m_playButton(new QToolButton(this))
    , m_timeline(new QSlider(Qt::Horizontal, this))
    , m_position(new QLabel(this))
    , m_speedBox(new QComboBox(this))
    , m_live(new QToolButton(this))
{
    setObjectName(QStringLiteral("replayBar"));
    auto *banner = new QLabel(tr("<b>Replay</b>"), this);
    banner->setToolTip(tr("The window shows the run as it stood at the chosen point: nothing here is live, "
                          "and steering is off until Back to Live."));
    m_playButton->setObjectName(QStringLiteral("replayPlay"));
    m_timeline->setObjectName(QStringLiteral("replayTimeline"));
    m_timeline->setToolTip(tr("The run's experiments in the order they ended: drag to go to any point"));
    m_position->setObjectName(QStringLiteral("replayPosition"));
    m_speedBox->setObjectName(QStringLiteral("replaySpeed"));
    m_speedBox->setToolTip(tr("Experiments per second while playing"));
    for (double s : speeds())
        m_speedBox->addItem(tr("%1 exp/s").arg(s), s);
    m_speedBox->setCurrentIndex(int(speeds().indexOf(m_speed)));
    m_live->setObjectName(QStringLiteral("replayLive"));
    m_live->setText(tr("Back to Live"));
    m_live->setToolTip(tr("End the replay and show the run as it is now (Esc)"));
    m_live->setShortcut(QKeySequence(Qt::Key_Escape));

    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(6, 2, 6, 2);
    layout->addWidget(banner);
    layout->addWidget(m_playButton);
    layout->addWidget(m_timeline, 1);
    layout->addWidget(m_position);
    layout->addWidget(m_speedBox);
    layout->addWidget(m_live);

    m_ticker.setInterval(kTickMs);
    connect(&m_ticker, &QTimer::timeout, this, &ReplayBar::tick);
    connect(m_playButton, &QToolButton::clicked, this, [this] { isPlaying() ? pause() : play(); });
    connect(m_timeline, &QSlider::valueChanged, this, [this](int value) {
        if (value != m_frame)
            seek(value);
    });
    connect(m_speedBox, &QComboBox::currentIndexChanged, this,
        [this](int index) { setSpeed(m_speedBox->itemData(index).toDouble()); });
    connect(m_live, &QToolButton::clicked, this, &ReplayBar::stop);
    updateControls();
    hide();
}

ReplayBar::~ReplayBar() = default;

QVector<double> ReplayBar::speeds()
{
    return { 1, 2, 5, 10, 25, 100 };
}

int ReplayBar::frameCount() const
{
    return m_replay ? m_replay->frameCount() : 0;
}

void ReplayBar::start(const QString &runDir)
{
    pause();
    m_replay.reset();
    m_loading = true;
    const quint64 generation = ++m_generation;
    m_position->setText(tr("Reading the run…"));
    QWidget::show();
    updateControls();
    runInBackground(
        this,
        [runDir] {
            QString error;
            auto replay = RunReplay::open(runDir, &error);
            return std::make_pair(replay, error);
        },
        [this, generation](const std::pair<std::shared_ptr<RunReplay>, QString> &result) {
            if (generation != m_generation)
                return;
            m_loading = false;
            if (!result.first) {
                hide();
                Q_EMIT failed(result.second);
                return;
            }
            m_replay = result.first;
            m_frame = -1;
            Q_EMIT started();
            showFrame(0);
            play();
        });
}

void ReplayBar::stop()
{
    if (!isActive())
        return;
    ++m_generation;
    m_ticker.stop();
    m_replay.reset();
    m_loading = false;
    hide();
    Q_EMIT ended();
}

void ReplayBar::seek(int frame)
{
    if (m_replay)
        showFrame(std::clamp(frame, 0, frameCount()));
}

void ReplayBar::play()
{
    if (!m_replay)
        return;
    if (m_frame >= frameCount())
        showFrame(0); // from the start again
    m_carry = 0;
    m_sinceTick.start();
    m_ticker.start();
    updateControls();
}

void ReplayBar::pause()
{
    m_ticker.stop();
    updateControls();
}

void ReplayBar::setSpeed(double experimentsPerSecond)
{
    if (!(experimentsPerSecond > 0))
        return;
    m_speed = experimentsPerSecond;
    const int index = m_speedBox->findData(experimentsPerSecond);
    if (index >= 0 && index != m_speedBox->currentIndex())
        m_speedBox->setCurrentIndex(index);
}

void ReplayBar::tick()
{
    // Paced by the clock, not by the timer's count: a slow frame does not slow the replay down.
    m_carry += m_speed * m_sinceTick.restart() / 1000.0;
    const int step = int(m_carry);
    if (step <= 0)
        return;
    m_carry -= step;
    showFrame(std::min(frameCount(), m_frame + step));
    if (m_frame >= frameCount())
        pause();
}

void ReplayBar::showFrame(int frame)
{
    if (!m_replay || frame == m_frame)
        return;
    m_frame = frame;
    const RunSnapshotPtr snapshot = m_replay->snapshotAt(frame);
    updateControls();
    Q_EMIT frameShown(snapshot);
}

QString ReplayBar::positionText() const
{
    if (!m_replay)
        return m_loading ? tr("Reading the run…") : QString();
    const int id = m_replay->frameExperiment(m_frame);
    const QString into = clockText(m_replay->secondsInto(m_frame));
    if (m_frame == 0)
        return tr("Profiled, before any experiment · %1 experiments to play").arg(frameCount());
    return tr("Experiment %1 of %2 (#%3) · %4 into the run").arg(m_frame).arg(frameCount()).arg(id).arg(into);
}

void ReplayBar::updateControls()
{
    const bool ready = m_replay != nullptr;
    m_playButton->setEnabled(ready);
    m_timeline->setEnabled(ready);
    m_playButton->setIcon(style()->standardIcon(isPlaying() ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    m_playButton->setToolTip(isPlaying() ? tr("Pause the replay") : tr("Play from here"));
    const QSignalBlocker block(m_timeline);
    m_timeline->setRange(0, frameCount());
    m_timeline->setValue(std::max(0, m_frame));
    m_position->setText(positionText());
}

} // namespace ak
