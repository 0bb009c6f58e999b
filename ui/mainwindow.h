#pragma once

#include <QMainWindow>

class QLabel;

namespace ak {

// The application window: kernel table, charts, commit list + diff, log, device in the status bar.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    void openRun(const QString &runDir);

private:
    QLabel *m_deviceLabel = nullptr;
};

} // namespace ak
