"""matmul: C = act(A @ B [+ bias]), A[M, K], B[K, N], bias[N].

Contract attributes: bias false/true (kernel_fn(A, B, bias), added in the kernel's epilogue),
activation "none", "gelu" (exact), "gelu_tanh", "silu", "relu" (applied after the bias)."""

from ..contract.inputs import data, weight
from ..contract.spec import (OpSpec, Refused, choice, fact_args, fact_name, fact_param, fact_tensor, pick,
                             site_label, tol)

ATTRS = {"bias": choice(False, True), "activation": choice("none", "gelu", "gelu_tanh", "silu", "relu")}
_ACT_FLOPS = {"none": 0, "gelu": 8, "gelu_tanh": 9, "silu": 4, "relu": 1}
_ACT_TEXT = {"none": "", "gelu": "gelu", "gelu_tanh": 'gelu(approximate="tanh")', "silu": "silu", "relu": "relu"}


def reference(A, B):
    import torch
    return torch.matmul(A, B)


def _activation(name):
    if name == "none":
        return None
    import torch.nn.functional as F
    return {"gelu": F.gelu, "gelu_tanh": lambda c: F.gelu(c, approximate="tanh"), "silu": F.silu,
            "relu": F.relu}[name]


def _bind(attrs):
    has_bias, act_name = attrs["bias"], attrs["activation"]
    act = _activation(act_name)
    if not has_bias and act is None:
        ref = reference
    elif has_bias:
        def ref(A, B, bias):
            import torch
            C = torch.addmm(bias, A, B) if A.dim() == 2 else torch.matmul(A, B) + bias
            return C if act is None else act(C)
    else:
        def ref(A, B):
            import torch
            return act(torch.matmul(A, B))

    def make_inputs(size, dtype, device, gen, dist):
        M, N, K = size["M"], size["N"], size["K"]
        A = data((M, K), dtype, device, gen, dist, SPEC)
        B = weight((K, N), dtype, device, gen, scale=K ** -0.5)   # keeps C ~ O(|A|)
        return (A, B, weight((N,), dtype, device, gen)) if has_bias else (A, B)

    expr = "A @ B + bias" if has_bias else "A @ B"
    if act is not None:
        expr = "%s(%s)" % (_ACT_TEXT[act_name], expr)
    extra = (1 if has_bias else 0) + _ACT_FLOPS[act_name]
    return dict(
        reference=ref, make_inputs=make_inputs, summary="C = " + expr,
        args=("A", "B", "bias") if has_bias else ("A", "B"),
        arg_shapes=("A[M, K]", "B[K, N]", "bias[N]") if has_bias else ("A[M, K]", "B[K, N]"),
        flops=lambda s: 2.0 * s["M"] * s["N"] * s["K"] + extra * s["M"] * s["N"],
        flops_text="2*M*N*K" + (" + %d*M*N" % extra if extra else ""),
        bytes=lambda s, dt: float(s["M"] * s["K"] + s["K"] * s["N"] + s["M"] * s["N"]
                                  + (s["N"] if has_bias else 0)) * dt,
        bytes_text="(M*K + K*N + M*N%s) * dt" % (" + N" if has_bias else ""),
        constraints="any M, N, K >= 1; A and B contiguous" + ("; C = %s in one kernel (the epilogue)" % expr
                                                              if extra else ""),
        # Exact and tanh GELU differ by at most 4.7e-4: below what bf16/fp16 outputs resolve.
        contract_probe=("float32", "normal") if act_name in ("gelu", "gelu_tanh") else ())


_ACT_NAMES = {None: "none", "none": "none", "identity": "none", "linear": "none", "gelu": "gelu",
              "gelu_tanh": "gelu_tanh", "gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh",
              "gelu_fast": "gelu_tanh", "silu": "silu", "swish": "silu", "relu": "relu"}


def site_attrs(fact):
    """One call site's facts -> attrs (docs/contracts.md); Refused for what is not supported."""
    args, out, where, name = fact_args(fact), {}, site_label(fact), fact_name(fact).lower()
    if "addmm" in name:
        for k in ("alpha", "beta"):
            found, v = pick(args, k)
            if found and v not in (1, 1.0):
                raise Refused("%s: addmm with %s %r: not supported (1 only)" % (where, k, v))
        addend = fact_tensor(fact, "input", "bias", "self")
        if addend and len(addend.get("shape") or ()) == 2 and addend["shape"][0] != 1:
            raise Refused("%s: addmm with a full [M, N] addend: not supported (a bias [N] only)" % where)
        out["bias"] = True
    elif "linear" in name:
        has_b, b = fact_param(fact, "bias")
        b_arg = pick(args, "bias")
        tensors = [t.get("arg") for t in fact.get("tensors") or () if isinstance(t, dict)]
        if fact_tensor(fact, "bias") is not None or (has_b and b is not None):
            out["bias"] = True
        elif (has_b and b is None) or (b_arg[0] and b_arg[1] in (None, False)) or "weight" in tensors:
            out["bias"] = False
    elif args is not None or fact.get("tensors"):
        out["bias"] = False
        other = fact_tensor(fact, "other", "mat2", "b", "B")
        shape = (other or {}).get("shape") or ()
        lead = 1
        for d in shape[:-2]:
            lead *= int(d)
        if lead > 1:
            raise Refused("%s: batched matmul with a batched right operand %s: not a matmul folder's (B[K, N] "
                          "shared by every row; a bmm folder takes it)" % (where, list(shape)))
    act = fact.get("activation", pick(args, "activation")[1])
    if isinstance(act, dict):
        act = "gelu_tanh" if act.get("name") == "gelu" and act.get("approximate") == "tanh" else act.get("name")
    key = act.strip().lower() if isinstance(act, str) else act
    if key not in _ACT_NAMES:
        raise Refused("%s: matmul followed by activation %r: not supported (none, gelu, gelu_tanh, silu, relu)"
                      % (where, act))
    if act is not None:
        out["activation"] = _ACT_NAMES[key]
    return out


def from_shapes(shapes):
    (_, K), (K2, N) = shapes[0][-2:], shapes[1][-2:]
    if K != K2:
        raise ValueError("matmul shapes %r: inner dimensions %d and %d differ" % (shapes, K, K2))
    rows = 1
    for d in shapes[0][:-1]:
        rows *= d
    return {"M": rows, "N": N, "K": K}


SPEC = OpSpec(
    name="matmul",
    summary="",
    args=("A", "B"),
    arg_shapes=("A[M, K]", "B[K, N]"),
    output="C[M, N], dtype of A",
    dims=("M", "N", "K"),
    reference=None,
    make_inputs=None,
    flops=None,
    bytes=None,
    flops_text="",
    bytes_text="",
    tolerances=tol(1e-4, 1e-2, 2e-2),
    sizes={
        "cuda": [{"M": 256, "N": 256, "K": 256}, {"M": 1024, "N": 1024, "K": 1024},
                 {"M": 2048, "N": 2048, "K": 2048}, {"M": 4096, "N": 4096, "K": 4096},
                 {"M": 4096, "N": 11008, "K": 4096}],
        "cpu": [{"M": 64, "N": 64, "K": 64}, {"M": 256, "N": 256, "K": 256},
                {"M": 512, "N": 512, "K": 512}],
        "quick": [{"M": 32, "N": 48, "K": 64}, {"M": 128, "N": 128, "K": 128}],
    },
    odd_sizes={
        "cuda": [{"M": 1023, "N": 1537, "K": 4097}, {"M": 1, "N": 4097, "K": 511}],
        "cpu": [{"M": 97, "N": 131, "K": 67}, {"M": 255, "N": 129, "K": 513}],
        "quick": [{"M": 37, "N": 53, "K": 71}],
    },
    secret_ranges={
        "cuda": {"M": (65, 3000), "N": (65, 3000), "K": (17, 3000)},
        "cpu": {"M": (9, 300), "N": (9, 300), "K": (9, 300)},
        "quick": {"M": (5, 96), "N": (5, 96), "K": (5, 96)},
    },
    headline={"cuda": {"M": 2048, "N": 2048, "K": 2048},
              "cpu": {"M": 512, "N": 512, "K": 512},
              "quick": {"M": 256, "N": 256, "K": 256}},
    from_shapes=from_shapes,
    large={"float16": 300.0, "bfloat16": 1e4, "float32": 1e4},
    attr_defs=ATTRS,
    binder=_bind,
    sites=site_attrs,
).bind()
