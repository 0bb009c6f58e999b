#pragma once

#include "opcall.h"

#include <QString>

#include <cstdint>
#include <vector>

namespace ak {

// Input shapes of a profiled kernel in the order of its kernel.py contract (docs: DESIGN §4 /
// agent/python/harness/ops): matmul A[M,K], B[K,N]; bmm A[batch,M,K], B[batch,K,N] (logical, whatever
// B's layout); attention Q, K, V [B,H,S,D]; softmax x[rows,cols];
// layernorm x, weight, bias; rmsnorm x, weight; cross_entropy logits[b,v], targets[b];
// rotary x[B,H,S,D], cos, sin [S,D/2]; reduce x[M,N]. What the harness `extract` op needs to write a
// kernel.py with the model's own sizes.
class ContractShapes
{
public:
    using Shape = std::vector<int64_t>;

    // Empty when the kernel's own aten op does not carry the op's operands (a copy_ inside addmm,
    // rsqrt on a [.., 1] variance, an unfused SwiGLU whose weights live in other kernels).
    static std::vector<Shape> of(const QString &opType, const OpCall &call);

    // A matmul-class call (bmm, baddbmm, matmul) whose right operand is batched too (attention's
    // q @ k^T and probs @ v): its folder is a "bmm" one, not a "matmul" one (B[K, N] shared by all rows).
    static bool batchedRight(const OpCall &call);
};

} // namespace ak
