// Python.h must come before any Qt header (and defines macros Qt headers must see first).
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "kernelstaticcheck.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace ak {

namespace detail {
extern const char kStaticCheckScript[];
}

namespace {

using json = nlohmann::json;

// The interpreter and the two entry points of the script. Built once per process on first use; a
// function-local static makes that initialisation thread-safe whichever thread gets there first.
struct Embedded
{
    PyObject *analyze = nullptr;
    PyObject *rewrite = nullptr;
    QString status; // version, or why it did not start
    bool ok = false;
};

// Formats and clears the pending Python exception. Caller holds the GIL.
QString takePythonError()
{
    PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
    PyErr_Fetch(&type, &value, &traceback);
    QString message = QStringLiteral("unknown Python error");
    if (value) {
        if (PyObject *text = PyObject_Str(value)) {
            if (const char *utf8 = PyUnicode_AsUTF8(text))
                message = QString::fromUtf8(utf8);
            Py_DECREF(text);
        }
    }
    PyErr_Clear();
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(traceback);
    return message;
}

// Compiles the script into a module and looks up its functions. Caller holds the GIL.
void loadScript(Embedded *e)
{
    PyObject *code = Py_CompileString(detail::kStaticCheckScript, "<akstaticcheck>", Py_file_input);
    PyObject *module = code ? PyImport_ExecCodeModule("_akstaticcheck", code) : nullptr;
    Py_XDECREF(code);
    if (module) {
        e->analyze = PyObject_GetAttrString(module, "analyze");
        e->rewrite = PyObject_GetAttrString(module, "rewrite");
        Py_DECREF(module);
    }
    if (!e->analyze || !e->rewrite) {
        e->status
            = QStringLiteral("embedded Python: static check script failed to load: ") + takePythonError();
        return;
    }
    e->ok = true;
    e->status = QString::fromUtf8(Py_GetVersion()).section(QLatin1Char(' '), 0, 0);
}

Embedded start()
{
    Embedded e;
    if (Py_IsInitialized()) { // someone else in this process owns the interpreter: just use it
        const PyGILState_STATE gil = PyGILState_Ensure();
        loadScript(&e);
        PyGILState_Release(gil);
        return e;
    }
    PyConfig config;
    // Isolated: no environment variables, no user site, no argv parsing; the script needs only the
    // standard library. Signal handlers stay the application's (Ctrl+C must still reach Qt/CLI).
    PyConfig_InitIsolatedConfig(&config);
    config.install_signal_handlers = 0;
    config.site_import = 0;
    config.write_bytecode = 0;
    // So sys.executable and the standard library prefix are the real interpreter's, not our binary's.
    PyStatus status = PyConfig_SetBytesString(&config, &config.program_name, AUTOKERNEL_PYTHON_EXECUTABLE);
    // A bundled CLI (packaging/bundle-cli.sh) carries its own copy of the standard library; isolated
    // mode ignores PYTHONHOME (which would also leak into the user's interpreter), so it has its own name.
    const QByteArray home = qgetenv("AUTOKERNEL_EMBEDDED_PYTHONHOME");
    if (!PyStatus_Exception(status) && !home.isEmpty())
        status = PyConfig_SetBytesString(&config, &config.home, home.constData());
    if (!PyStatus_Exception(status))
        status = Py_InitializeFromConfig(&config);
    PyConfig_Clear(&config);
    if (PyStatus_Exception(status)) {
        e.status = QStringLiteral("embedded Python failed to start: %1")
                       .arg(QString::fromUtf8(status.err_msg ? status.err_msg : "unknown error"));
        return e;
    }
    loadScript(&e);
    // Initialisation left this thread holding the GIL; release it for good so any thread can take it.
    PyEval_SaveThread();
    return e;
}

const Embedded &embedded()
{
    static const Embedded e = start();
    return e;
}

// Calls fn(args) under the GIL and returns its str result, or nullopt with *error set. Steals args.
std::optional<std::string> callScript(PyObject *fn, PyObject *args, QString *error)
{
    std::optional<std::string> out;
    if (!args) {
        *error = takePythonError();
        return out;
    }
    PyObject *result = PyObject_CallObject(fn, args);
    Py_DECREF(args);
    Py_ssize_t size = 0;
    const char *utf8 = result ? PyUnicode_AsUTF8AndSize(result, &size) : nullptr;
    if (utf8)
        out = std::string(utf8, size_t(size));
    else
        *error = QStringLiteral("static check failed: ") + takePythonError();
    Py_XDECREF(result);
    return out;
}

KernelStaticInfo infoFromJson(const json &j)
{
    KernelStaticInfo info;
    info.ok = j.at("ok").get<bool>();
    info.error = QString::fromStdString(j.at("error").get<std::string>());
    info.errorLine = j.at("error_line").get<int>();
    info.kernelType = QString::fromStdString(j.at("kernel_type").get<std::string>());
    info.contract = QString::fromStdString(j.at("contract").get<std::string>());
    for (const auto &a : j.at("kernel_fn_args"))
        info.kernelFnArgs << QString::fromStdString(a.get<std::string>());
    for (const auto &c : j.at("constants")) {
        TunableConstant t;
        t.name = QString::fromStdString(c.at("name").get<std::string>());
        t.value = c.at("value").get<double>();
        t.isInteger = c.at("is_integer").get<bool>();
        t.line = c.at("line").get<int>();
        for (const auto &v : c.at("candidates"))
            t.candidates << v.get<double>();
        info.constants << t;
    }
    return info;
}

} // namespace

QString embeddedPythonStatus()
{
    return embedded().status;
}

KernelStaticInfo checkKernelSource(const QByteArray &source, const QString &fileName)
{
    KernelStaticInfo info;
    const Embedded &e = embedded();
    if (!e.ok) {
        info.error = e.status;
        return info;
    }
    QString error;
    const QByteArray name = fileName.toUtf8();
    const PyGILState_STATE gil = PyGILState_Ensure();
    const std::optional<std::string> result = callScript(e.analyze,
        Py_BuildValue("(y#s#)", source.constData(), Py_ssize_t(source.size()), name.constData(),
            Py_ssize_t(name.size())),
        &error);
    PyGILState_Release(gil);
    if (!result) {
        info.error = fileName + QStringLiteral(": ") + error;
        return info;
    }
    try {
        return infoFromJson(json::parse(*result));
    } catch (const json::exception &ex) { // the script and this parser disagree: a bug, said plainly
        info.error
            = QStringLiteral("static check returned malformed JSON: %1").arg(QString::fromUtf8(ex.what()));
        return info;
    }
}

QByteArray rewriteConstants(const QByteArray &source, const QMap<QString, double> &values, QString *error)
{
    QString err;
    const Embedded &e = embedded();
    std::optional<std::string> result;
    if (!e.ok) {
        err = e.status;
    } else {
        const PyGILState_STATE gil = PyGILState_Ensure();
        PyObject *dict = PyDict_New();
        for (auto it = values.cbegin(); dict && it != values.cend(); ++it) {
            PyObject *value = PyFloat_FromDouble(it.value());
            if (!value || PyDict_SetItemString(dict, it.key().toUtf8().constData(), value) != 0)
                Py_CLEAR(dict);
            Py_XDECREF(value);
        }
        PyObject *args
            = dict ? Py_BuildValue("(y#N)", source.constData(), Py_ssize_t(source.size()), dict) : nullptr;
        result = callScript(e.rewrite, args, &err);
        PyGILState_Release(gil);
    }
    QByteArray out;
    if (result) {
        try {
            const json j = json::parse(*result);
            if (j.contains("error")) {
                err = QString::fromStdString(j.at("error").get<std::string>());
            } else {
                out = source;
                // Spans come sorted from the end, so earlier offsets stay valid while splicing.
                for (const auto &span : j.at("spans")) {
                    const auto start = span.at(0).get<qsizetype>();
                    const auto end = span.at(1).get<qsizetype>();
                    out.replace(start, end - start, QByteArray::fromStdString(span.at(2).get<std::string>()));
                }
            }
        } catch (const json::exception &ex) {
            err = QStringLiteral("rewrite returned malformed JSON: %1").arg(QString::fromUtf8(ex.what()));
            out.clear();
        }
    }
    if (error)
        *error = err;
    return err.isEmpty() ? out : QByteArray();
}

QString validateProposal(const KernelStaticInfo &oldInfo, const KernelStaticInfo &newInfo)
{
    if (!newInfo.ok)
        return newInfo.error.isEmpty() ? QStringLiteral("the proposal failed the static check")
                                       : newInfo.error;
    if (newInfo.kernelType != oldInfo.kernelType)
        return QStringLiteral("KERNEL_TYPE changed from \"%1\" to \"%2\"; it must stay \"%1\"")
            .arg(oldInfo.kernelType, newInfo.kernelType);
    if (newInfo.kernelFnArgs != oldInfo.kernelFnArgs)
        return QStringLiteral("kernel_fn's parameters changed from (%1) to (%2); keep the signature")
            .arg(oldInfo.kernelFnArgs.join(QStringLiteral(", ")),
                newInfo.kernelFnArgs.join(QStringLiteral(", ")));
    if (newInfo.contract != oldInfo.contract)
        return QStringLiteral(
            "TEST_SIZES, TOLERANCES or TEST_DTYPES changed; they are the harness's contract "
            "and must stay as they are");
    return QString();
}

} // namespace ak
