#include "secrets.h"

#include <QMutex>
#include <QMutexLocker>
#include <QRegularExpression>
#include <QSet>

namespace ak::secrets {

namespace {

struct Registry
{
    QMutex mutex;
    QSet<QString> values;
    QSet<QString> names;
};

Registry &registry()
{
    static Registry r;
    return r;
}

const QRegularExpression &keyShapes()
{
    // Prefixed formats of the common providers; long enough not to match ordinary text.
    static const QRegularExpression re(QStringLiteral(
        "\\b(?:sk-ant-[A-Za-z0-9_\\-]{16,}|sk-(?:proj-)?[A-Za-z0-9_\\-]{20,}|hf_[A-Za-z0-9]{20,}"
        "|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|AKIA[0-9A-Z]{16}|xox[bpa]-[A-Za-z0-9\\-]{"
        "10,}"
        "|AIza[0-9A-Za-z_\\-]{35})"));
    return re;
}

const QRegularExpression &secretNames()
{
    static const QRegularExpression re(QStringLiteral("(_KEY$|^KEY$|_KEYS?_|TOKEN|SECRET|PASSWORD|PASSWD|"
                                                      "CREDENTIAL|^AWS_|_AUTH$|APIKEY|^SSH_AUTH_SOCK$)"),
        QRegularExpression::CaseInsensitiveOption);
    return re;
}

} // namespace

void registerValue(const QString &value)
{
    const QString v = value.trimmed();
    if (v.size() < 8)
        return;
    Registry &r = registry();
    QMutexLocker lock(&r.mutex);
    r.values.insert(v);
}

void registerName(const QString &environmentVariable)
{
    const QString n = environmentVariable.trimmed();
    if (n.isEmpty())
        return;
    Registry &r = registry();
    QMutexLocker lock(&r.mutex);
    r.names.insert(n);
}

bool looksSecret(const QString &name)
{
    if (secretNames().match(name).hasMatch())
        return true;
    Registry &r = registry();
    QMutexLocker lock(&r.mutex);
    return r.names.contains(name);
}

QProcessEnvironment scrubbed(const QProcessEnvironment &env)
{
    QProcessEnvironment out = env;
    for (const QString &name : env.keys())
        if (looksSecret(name))
            out.remove(name);
    return out;
}

QString redact(const QString &text)
{
    if (text.isEmpty())
        return text;
    QString out = text;
    {
        Registry &r = registry();
        QMutexLocker lock(&r.mutex);
        for (const QString &v : std::as_const(r.values))
            out.replace(v, QStringLiteral("[redacted]"));
    }
    out.replace(keyShapes(), QStringLiteral("[redacted]"));
    return out;
}

} // namespace ak::secrets
