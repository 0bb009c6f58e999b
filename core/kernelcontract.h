#pragma once

#include <QString>
#include <QStringList>

#include <nlohmann/json.hpp>

namespace ak {

// The model's own call a kernel folder stands for (docs/contracts.md): what is called, the attributes
// that decide its result (eps, offset, causal, bias, approximate, rotary layout...), and, when the
// folder cannot be plugged into the model, why. Written once when the run is created (from the
// harness's `extract` and the plug-check), out of any agent's reach; the judge checks every candidate
// against it, the plug routes only calls that match it.
struct KernelContract
{
    QString callable; // "module:transformers...LlamaRMSNorm", "function:torch.nn.functional.layer_norm"
    nlohmann::json attrs = nlohmann::json::object(); // {"eps": 1e-06, "offset": 1.0}
    QString refused; // why the folder is not pluggable; empty when it is
    // A region folder (#40): the ops it swallows, in the order they run ("add", "rmsnorm"); the
    // single-op folders for them at the same sites are not created.
    QStringList covers;

    bool isEmpty() const
    {
        return callable.isEmpty() && attrs.empty() && refused.isEmpty() && covers.isEmpty();
    }
    // "swallows: add, rmsnorm" for a region, empty otherwise.
    QString coversText() const;
    // "eps 1e-06 · offset 1": the attributes as people read them, in key order.
    QString attributesText() const;
    // The callable's last name ("LlamaRMSNorm", "layer_norm"), for a table cell.
    QString callableName() const;

    nlohmann::json toJson() const; // {"callable", "attrs", "refused"?}; {} when empty
    static KernelContract fromJson(const nlohmann::json &o); // lenient: missing fields stay empty

    bool operator==(const KernelContract &o) const
    {
        return callable == o.callable && attrs == o.attrs && refused == o.refused && covers == o.covers;
    }
};

} // namespace ak
