#include "dynamiclibrary.h"

#include <dlfcn.h>

namespace ak {

DynamicLibrary::DynamicLibrary(const QStringList &candidates)
{
    QStringList errors;
    for (const QString &name : candidates) {
        m_handle = dlopen(name.toLocal8Bit().constData(), RTLD_NOW | RTLD_LOCAL);
        if (m_handle) {
            m_fileName = name;
            return;
        }
        const char *e = dlerror();
        errors << (e ? QString::fromLocal8Bit(e) : name + QStringLiteral(": cannot be opened"));
    }
    m_error = errors.join(QStringLiteral("; "));
}

DynamicLibrary::~DynamicLibrary()
{
    if (m_handle)
        dlclose(m_handle);
}

void *DynamicLibrary::rawSymbol(const char *symbol) const
{
    return m_handle ? dlsym(m_handle, symbol) : nullptr;
}

} // namespace ak
