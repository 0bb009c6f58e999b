#pragma once

#include "opcall.h"

#include <QString>
#include <QStringList>

namespace ak {

// Decides the op type of a profiled kernel. The launching aten op (and the aten ops around it) come
// first: cuBLAS and cuDNN kernel names (nvjet_sm90_..., cudnn_generated_fort_native_sdpa_...) say
// little, the op that launched them says exactly what ran. Order:
//  1. the outermost *specific* aten op in the chain (aten::linear > aten::addmm > its copy_ ;
//     aten::cross_entropy_loss > aten::_log_softmax; aten::scaled_dot_product_attention > bmm);
//  2. for generic elementwise / reduction / copy work, the nn.Module it ran in when its class name
//     says what it implements (RMSNorm, Rotary, SwiGLU) - unfused torch code for a fusable op;
//  3. the generic class of the innermost aten op (activation, elementwise, reduce, copy);
//  4. kernel-name patterns, only when there is no aten op to go by;
//  5. "unknown", shown as such.
class OpClassifier
{
public:
    struct Result
    {
        QString opType; // one of opTypes()
        QString reason; // "aten::addmm", "module RMSNorm", "kernel name", "no match"
    };

    static Result classify(const OpCall &call);

    // The op type of one aten op name, ignoring context; empty if it has no class of its own.
    static QString opTypeOfAten(const QString &atenOp);
    // The op type a kernel name suggests; empty if none.
    static QString opTypeOfKernelName(const QString &kernelName);
    // Whether an op type is a specific op (matmul, flash_attention, ...) rather than generic work.
    static bool isSpecific(const QString &opType);

    // Every op type the classifier can return, "unknown" last. The names of the kernel types that
    // have a kernel.py contract (matmul, flash_attention, softmax, layernorm, rmsnorm, fused_mlp,
    // cross_entropy, rotary_embedding, reduce) are those of the contract.
    static QStringList opTypes();
};

} // namespace ak
