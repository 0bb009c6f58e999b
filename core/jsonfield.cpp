#include "jsonfield.h"

namespace ak::jsonfield {

namespace {

// The field's value, or nullptr when `o` is not an object, has no such key, or holds null there.
const Json *present(const Json &o, const char *key)
{
    if (!o.is_object())
        return nullptr;
    const auto it = o.find(key);
    return it == o.end() || it->is_null() ? nullptr : &*it;
}

// The value when `accept` says it has the right type; otherwise records why not.
template<typename Accept>
const Json *checked(const Json &o, const char *key, const char *expected, Accept accept, Problem *problem)
{
    const Json *v = present(o, key);
    if (v && accept(*v))
        return v;
    if (problem) {
        problem->kind = v ? Problem::Kind::WrongType : Problem::Kind::Missing;
        problem->key = key;
        problem->expected = QString::fromLatin1(expected);
    }
    return nullptr;
}

bool isString(const Json &v)
{
    return v.is_string();
}
bool isNumber(const Json &v)
{
    return v.is_number();
}
bool isInteger(const Json &v)
{
    return v.is_number_integer();
}
bool isBoolean(const Json &v)
{
    return v.is_boolean();
}
bool isObject(const Json &v)
{
    return v.is_object();
}
bool isArray(const Json &v)
{
    return v.is_array();
}

QString toText(const Json &v)
{
    const auto &s = v.get_ref<const std::string &>();
    return QString::fromUtf8(s.data(), qsizetype(s.size()));
}

} // namespace

QString Problem::phrase() const
{
    switch (kind) {
    case Kind::None:
        return QString();
    case Kind::Missing:
        return QStringLiteral("is missing");
    case Kind::WrongType:
        return QStringLiteral("is not ") + expected;
    }
    return QString();
}

QString Problem::message() const
{
    return kind == Kind::None ? QString() : QStringLiteral("\"%1\" %2").arg(field(), phrase());
}

namespace strict {

std::optional<QString> text(const Json &o, const char *key, Problem *problem)
{
    if (const Json *v = checked(o, key, "a string", isString, problem))
        return toText(*v);
    return std::nullopt;
}

std::optional<double> number(const Json &o, const char *key, Problem *problem)
{
    if (const Json *v = checked(o, key, "a number", isNumber, problem))
        return v->get<double>();
    return std::nullopt;
}

std::optional<qint64> integer(const Json &o, const char *key, Problem *problem)
{
    if (const Json *v = checked(o, key, "a whole number", isInteger, problem))
        return v->get<qint64>();
    return std::nullopt;
}

std::optional<bool> boolean(const Json &o, const char *key, Problem *problem)
{
    if (const Json *v = checked(o, key, "true or false", isBoolean, problem))
        return v->get<bool>();
    return std::nullopt;
}

const Json *object(const Json &o, const char *key, Problem *problem)
{
    return checked(o, key, "an object", isObject, problem);
}

const Json *array(const Json &o, const char *key, Problem *problem)
{
    return checked(o, key, "a list", isArray, problem);
}

} // namespace strict

QString text(const Json &o, const char *key, const QString &fallback)
{
    return strict::text(o, key).value_or(fallback);
}

double number(const Json &o, const char *key, double fallback)
{
    return strict::number(o, key).value_or(fallback);
}

qint64 integer(const Json &o, const char *key, qint64 fallback)
{
    return strict::integer(o, key).value_or(fallback);
}

bool boolean(const Json &o, const char *key, bool fallback)
{
    return strict::boolean(o, key).value_or(fallback);
}

const Json *object(const Json &o, const char *key)
{
    return strict::object(o, key);
}

const Json *array(const Json &o, const char *key)
{
    return strict::array(o, key);
}

QStringList texts(const Json &o, const char *key)
{
    QStringList out;
    if (const Json *a = array(o, key))
        for (const Json &v : *a)
            if (v.is_string())
                out << toText(v);
    return out;
}

} // namespace ak::jsonfield
