#pragma once

#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QVariantList>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace ak {

// One profiled kernel as the profiler saw it, before classification: the kernel and the aten op
// that launched it, with that op's input shapes. What OpClassifier and Roofline work from.
struct OpCall
{
    QString kernelName; // "nvjet_sm90_tst_...", or the aten op on a CPU
    QString atenOp; // innermost aten op that launched it ("aten::addmm")
    QStringList opStack; // enclosing aten ops, innermost first ("aten::linear")
    QString module; // innermost nn.Module class name ("RMSNorm"), may be empty
    std::vector<std::vector<int64_t>> shapes; // one per op input; empty for non-tensor arguments
    QStringList dtypes; // one per op input: "fp32", "bf16", "int64", "" ...
    QVariantList concreteInputs; // scalar argument values where the profiler recorded them
    // Python functions on the calls' stacks ("apply_rotary_pos_emb", "rotate_half", "forward"): a
    // function can name the fusable op its generic work implements, as a module class can.
    QStringList functions;
    // Where in the model it ran (profiler rows' call_sites, kept as recorded): module qualified name,
    // module class, torch function, the user's frames, shapes, dtypes, calls per iteration.
    nlohmann::json callSites = nlohmann::json::array();
    // A region row (atenOp "region::<op type>", #40): the ops and sites it swallows, each
    // {"op": "add", "site": "layers.0", "time_us": ...}; a matmul row also lists the activation it
    // fuses. Empty for a single-op row.
    nlohmann::json covers = nlohmann::json::array();

    // The shapes of the op's tensor inputs, in order (non-tensor arguments have no shape).
    std::vector<std::vector<int64_t>> tensorShapes() const
    {
        std::vector<std::vector<int64_t>> out;
        for (const auto &s : shapes)
            if (!s.empty())
                out.push_back(s);
        return out;
    }

    // The op's bare name, the key of every per-op table: "aten::add.Tensor" -> "add" (namespace and
    // overload dropped; a name without them is returned as it is).
    static QString bareOp(const QString &atenOp)
    {
        const QString n = atenOp.startsWith(QLatin1String("aten::")) ? atenOp.mid(6) : atenOp;
        return n.section(QLatin1Char('.'), 0, 0);
    }
};

} // namespace ak

Q_DECLARE_METATYPE(ak::OpCall)
