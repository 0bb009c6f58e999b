"""flash_attention: softmax(Q K^T * scale [+ causal mask]) V over Q, K, V [B, H, S, D].

Contract attributes: causal (default true), scale (null = 1/sqrt(D)), kv_heads (null = H: the plug
repeats K/V heads of a grouped-query call, the kernel always sees H heads)."""

import math

from ..contract.inputs import data
from ..contract.spec import (OpSpec, Refused, choice, fact_args, fact_name, fact_tensor, optional_count,
                             optional_float, pick, site_label, tol)

ATTRS = {"causal": choice(True, False),
         "scale": optional_float(None, "null (= 1/sqrt(D)) or any float > 0"),
         "kv_heads": optional_count(None, "null (= H) or a divisor of H (the plug repeats K/V heads; "
                                          "the kernel sees H)")}


def _math(Q, K, V, causal=True, scale=None):
    import torch
    S = Q.shape[-2]
    scores = torch.matmul(Q, K.transpose(-1, -2)) * (1.0 / math.sqrt(Q.shape[-1]) if scale is None else scale)
    if causal:
        mask = torch.ones(S, S, dtype=torch.bool, device=Q.device).triu(1)
        scores = scores.masked_fill(mask, float("-inf"))
    return torch.matmul(torch.softmax(scores, dim=-1), V)


def _sdpa_takes_scale(sdpa=None, version=None):
    """Whether scaled_dot_product_attention takes `scale=` (torch 2.1 on). It is a builtin: on torch 2.x
    inspect finds no signature, and taking that for "no" made every reference with an explicit scale
    (transformers passes one at every attention) the materialised math path, 7x slower than SDPA on an
    H100 (session 25): the judge saw a 0.47x kernel as 6.9x PyTorch."""
    import inspect
    import torch
    import torch.nn.functional as F
    sdpa = sdpa if sdpa is not None else getattr(F, "scaled_dot_product_attention", None)
    if sdpa is None:
        return False
    try:
        return "scale" in inspect.signature(sdpa).parameters
    except (TypeError, ValueError):
        pass
    try:
        major, minor = (int(p) for p in (version or torch.__version__).split("+")[0].split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (2, 1)


def _bind(attrs):
    causal, scale = attrs["causal"], attrs["scale"]

    if causal and scale is None:
        def reference(Q, K, V):
            import torch.nn.functional as F
            sdpa = getattr(F, "scaled_dot_product_attention", None)
            if sdpa is not None and Q.is_cuda:
                return sdpa(Q, K, V, is_causal=True)
            return _math(Q, K, V)

        truth = _math
    else:
        kw = {} if scale is None else {"scale": scale}
        cache = {}

        def reference(Q, K, V):
            import torch.nn.functional as F
            if Q.is_cuda:
                if "ok" not in cache:
                    cache["ok"] = hasattr(F, "scaled_dot_product_attention") and (not kw or _sdpa_takes_scale())
                if cache["ok"]:
                    return F.scaled_dot_product_attention(Q, K, V, is_causal=causal, **kw)
            return _math(Q, K, V, causal, scale)

        def truth(Q, K, V):
            return _math(Q, K, V, causal, scale)

    scale_text = "1/sqrt(D)" if scale is None else "%g" % scale
    return dict(
        reference=reference, truth=truth,
        summary="%s scaled-dot-product attention, scale %s" % ("causal" if causal else "non-causal", scale_text),
        flops=(lambda s: 4.0 * s["B"] * s["H"] * s["S"] * s["S"] * s["D"] / (2.0 if causal else 1.0)),
        flops_text="4*B*H*S*S*D / 2 (causal)" if causal else "4*B*H*S*S*D (non-causal)",
        constraints="any B, H, S >= 1; D in {16, 32, 64, 128} on CUDA (tested), Q/K/V contiguous; %s, "
                    "scale %s (the contract's)" % ("causal" if causal else "no mask", scale_text))


def make_inputs(size, dtype, device, gen, dist):
    shape = (size["B"], size["H"], size["S"], size["D"])
    Q = data(shape, dtype, device, gen, dist, SPEC)
    K = data(shape, dtype, device, gen, "normal", SPEC)
    V = data(shape, dtype, device, gen, "normal", SPEC)
    return (Q, K, V)


def site_attrs(fact):
    """One call site's facts -> attrs (docs/contracts.md); Refused for masks and dropout."""
    args, out, where = fact_args(fact), {}, site_label(fact)
    if args is None:
        return out
    sdpa = "scaled_dot_product_attention" in fact_name(fact)
    found, mask = pick(args, "attn_mask", "attention_mask", "mask")
    if fact_tensor(fact, "attn_mask", "attention_mask", "mask") is not None or (found and mask is not None):
        raise Refused("%s: attention with an explicit attn_mask tensor: not supported (only causal or no mask)"
                      % where)
    found, p = pick(args, "dropout_p", "dropout")
    if found and p not in (None, 0, 0.0):
        raise Refused("%s: attention with dropout_p %r: not supported (dropout 0 only)" % (where, p))
    found, causal = pick(args, "is_causal", "causal")
    if found:
        out["causal"] = bool(causal)
    elif sdpa:
        out["causal"] = False              # scaled_dot_product_attention's default
    found, scale = pick(args, "scale", "scaling", "softmax_scale")
    if found:
        out["scale"] = scale
    q, k = fact_tensor(fact, "query", "q", "Q"), fact_tensor(fact, "key", "k", "K")
    found, kvh = pick(args, "num_key_value_heads", "kv_heads", "n_kv_heads")
    if not found and q and k and len(q.get("shape") or ()) >= 3 and len(k.get("shape") or ()) >= 3:
        qh, kh = q["shape"][-3], k["shape"][-3]
        if kh != qh:
            if kh <= 0 or qh % kh:
                raise Refused("%s: attention with %d query heads and %d key heads: not supported (key heads "
                              "must divide query heads)" % (where, qh, kh))
            kvh = kh
    if kvh is not None and q and len(q.get("shape") or ()) >= 3 and kvh == q["shape"][-3]:
        kvh = None
    if kvh is not None:
        out["kv_heads"] = kvh
    return out


def from_shapes(shapes):
    B, H, S, D = shapes[0][-4:]
    return {"B": B, "H": H, "S": S, "D": D}


SPEC = OpSpec(
    name="flash_attention",
    summary="",
    args=("Q", "K", "V"),
    arg_shapes=("Q[B, H, S, D]", "K[B, H, S, D]", "V[B, H, S, D]"),
    output="O[B, H, S, D], dtype of Q",
    dims=("B", "H", "S", "D"),
    reference=None,
    make_inputs=make_inputs,
    flops=None,
    bytes=lambda s, dt: 4.0 * s["B"] * s["H"] * s["S"] * s["D"] * dt,
    flops_text="",
    bytes_text="4*B*H*S*D * dt",
    tolerances=tol(1e-4, 1e-2, 2e-2),
    sizes={
        "cuda": [{"B": 1, "H": 4, "S": 128, "D": 64}, {"B": 2, "H": 8, "S": 512, "D": 64},
                 {"B": 2, "H": 32, "S": 1024, "D": 64}, {"B": 1, "H": 16, "S": 2048, "D": 128},
                 {"B": 4, "H": 32, "S": 2048, "D": 128}],
        "cpu": [{"B": 1, "H": 2, "S": 64, "D": 32}, {"B": 2, "H": 4, "S": 256, "D": 64},
                {"B": 1, "H": 8, "S": 512, "D": 64}],
        "quick": [{"B": 1, "H": 2, "S": 32, "D": 16}, {"B": 2, "H": 2, "S": 64, "D": 32}],
    },
    odd_sizes={
        "cuda": [{"B": 1, "H": 3, "S": 1023, "D": 64}, {"B": 2, "H": 5, "S": 77, "D": 128}],
        "cpu": [{"B": 1, "H": 3, "S": 77, "D": 32}, {"B": 2, "H": 1, "S": 129, "D": 64}],
        "quick": [{"B": 1, "H": 3, "S": 37, "D": 16}],
    },
    secret_ranges={
        "cuda": {"B": (1, 3), "H": (1, 9), "S": (17, 1500), "D": (64, 64)},
        "cpu": {"B": (1, 2), "H": (1, 5), "S": (5, 200), "D": (32, 32)},
        "quick": {"B": (1, 2), "H": (1, 3), "S": (3, 60), "D": (16, 16)},
    },
    headline={"cuda": {"B": 2, "H": 32, "S": 1024, "D": 64},
              "cpu": {"B": 1, "H": 8, "S": 512, "D": 64},
              "quick": {"B": 1, "H": 4, "S": 256, "D": 64}},
    from_shapes=from_shapes,
    # Logits ~ large * sqrt(D) / sqrt(D): 30 already overflows exp() without the max subtraction
    # (4.5 sigma = 135 > 88), while staying a well-conditioned softmax for fp32 (100 is not).
    large={"float16": 30.0, "bfloat16": 30.0, "float32": 30.0},
    attr_defs=ATTRS,
    binder=_bind,
    sites=site_attrs,
).bind()
