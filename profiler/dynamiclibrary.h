#pragma once

#include <QString>
#include <QStringList>

namespace ak {

// A shared library opened with dlopen at run time, closed on destruction. Vendor libraries (NVML,
// the CUDA driver, ROCm SMI) are optional: a machine without them is normal, so nothing links them.
class DynamicLibrary
{
public:
    // Tries each candidate file name in order; isLoaded() says whether one opened.
    explicit DynamicLibrary(const QStringList &candidates);
    ~DynamicLibrary();
    DynamicLibrary(const DynamicLibrary &) = delete;
    DynamicLibrary &operator=(const DynamicLibrary &) = delete;

    bool isLoaded() const { return m_handle != nullptr; }
    QString fileName() const { return m_fileName; }
    QString error() const { return m_error; } // why none of the candidates opened

    // The symbol cast to a function pointer type; nullptr if missing.
    template<typename Fn>
    Fn resolve(const char *symbol) const
    {
        return reinterpret_cast<Fn>(rawSymbol(symbol));
    }

private:
    void *rawSymbol(const char *symbol) const;

    void *m_handle = nullptr;
    QString m_fileName;
    QString m_error;
};

} // namespace ak
