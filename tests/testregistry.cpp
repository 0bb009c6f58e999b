#include "testregistry.h"

#include <QTextStream>

#include <algorithm>
#include <memory>

namespace ak::test {

std::vector<Entry> &registry()
{
    static std::vector<Entry> entries;
    return entries;
}

int runAll(int argc, char **argv)
{
    QStringList selected;
    QStringList passThrough;
    for (int i = 0; i < argc; ++i) {
        const QString arg = QString::fromLocal8Bit(argv[i]);
        if (arg == QLatin1String("-class") && i + 1 < argc) {
            selected << QString::fromLocal8Bit(argv[++i]);
            continue;
        }
        passThrough << arg;
    }
    auto &entries = registry();
    std::sort(entries.begin(), entries.end(),
        [](const Entry &a, const Entry &b) { return qstrcmp(a.name, b.name) < 0; });
    int failedClasses = 0;
    int ran = 0;
    for (const Entry &e : entries) {
        if (!selected.isEmpty() && !selected.contains(QLatin1String(e.name)))
            continue;
        std::unique_ptr<QObject> obj(e.create());
        ++ran;
        if (QTest::qExec(obj.get(), passThrough) != 0)
            ++failedClasses;
    }
    QTextStream(stdout) << "Test classes: " << ran << " run, " << failedClasses << " failed" << Qt::endl;
    if (ran == 0)
        return 1;
    return std::min(failedClasses, 127);
}

} // namespace ak::test
