#pragma once

#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

// Reading one field of a JSON object (nlohmann_json: worker replies, run files, LLM replies).
//
// Every reader in core and agent used to carry its own str()/num() with its own fallback (0, NaN,
// throw). These helpers never throw, and each call site says its fallback, so "missing" reads the
// same everywhere and the difference between 0 and NaN is visible where it matters.
//
// `o` may be any JSON value: a field of something that is not an object is missing. A null field is
// missing too (the worker writes NaN/Inf as null). number() takes integers and floats alike;
// integer() takes JSON integers only: a count or an id written as 2.5 is malformed, not 2.
namespace ak::jsonfield {

using Json = nlohmann::json;

// ---- Lenient: the value, or `fallback` when the field is missing or of another type.

// Text fallback is always "" in this code base; the numbers are where fallbacks differ, so they must say.
QString text(const Json &o, const char *key, const QString &fallback = QString());
double number(const Json &o, const char *key, double fallback);
qint64 integer(const Json &o, const char *key, qint64 fallback);
bool boolean(const Json &o, const char *key, bool fallback);
const Json *object(const Json &o, const char *key); // nullptr unless an object
const Json *array(const Json &o, const char *key); // nullptr unless an array
QStringList texts(const Json &o, const char *key); // an array's strings; other entries skipped

// ---- Strict: nullopt (nullptr) when the field is missing or of another type, with `problem` (when
// given) saying which field and what is wrong, so the caller can write "file: field: problem" in its
// own words. `problem` is written only when the read fails.

struct Problem
{
    enum class Kind { None, Missing, WrongType };
    Kind kind = Kind::None;
    std::string key; // the field as named in the JSON
    QString expected; // "a string", "a number", "a whole number", "true or false", "an object", "a list"

    explicit operator bool() const { return kind != Kind::None; }
    bool missing() const { return kind == Kind::Missing; }
    bool wrongType() const { return kind == Kind::WrongType; }
    QString field() const { return QString::fromStdString(key); }
    QString phrase() const; // "is missing", "is not a number": to follow the field's name
    QString message() const; // "\"speedup\" is not a number"
};

namespace strict {
std::optional<QString> text(const Json &o, const char *key, Problem *problem = nullptr);
std::optional<double> number(const Json &o, const char *key, Problem *problem = nullptr);
std::optional<qint64> integer(const Json &o, const char *key, Problem *problem = nullptr);
std::optional<bool> boolean(const Json &o, const char *key, Problem *problem = nullptr);
const Json *object(const Json &o, const char *key, Problem *problem = nullptr);
const Json *array(const Json &o, const char *key, Problem *problem = nullptr);
} // namespace strict

} // namespace ak::jsonfield
