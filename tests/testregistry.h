#pragma once

// One test executable per library: each QtTest class registers itself with AK_TEST_CLASS and the
// library's main runs them all (or the ones named with -class Name, repeatable).
#include <QObject>
#include <QStringList>
#include <QTest>

#include <functional>
#include <vector>

namespace ak::test {

struct Entry
{
    const char *name;
    QObject *(*create)();
};

std::vector<Entry> &registry();

struct Registrar
{
    Registrar(const char *name, QObject *(*create)()) { registry().push_back({ name, create }); }
};

// Runs every registered class; extra arguments are passed to QTest (e.g. a test function name
// with -class). Returns the number of failed classes, capped at 127 for the exit code.
int runAll(int argc, char **argv);

} // namespace ak::test

#define AK_TEST_CLASS(Class)                                                                                 \
    static ak::test::Registrar s_akRegistrar_##Class(#Class, []() -> QObject * { return new Class; });
