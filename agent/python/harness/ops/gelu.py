"""gelu, tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), or exact (erf).

Contract attribute: approximate "tanh" (default) or "none" (exact, x * Phi(x), F.gelu's default)."""

import dataclasses

from ..contract.inputs import data
from ..contract.spec import OpSpec, Refused, choice, fact_args, fact_name, pick, rows_of, site_label, tol

ATTRS = {"approximate": choice("tanh", "none")}


def reference(x):
    import torch.nn.functional as F
    return F.gelu(x, approximate="tanh")


def make_inputs(size, dtype, device, gen, dist):
    return (data((size["M"], size["N"]), dtype, device, gen, dist, SPEC),)


def from_shapes(shapes):
    return {"M": rows_of(shapes[0]), "N": shapes[0][-1]}


def elementwise_spec(name, summary, ref, inputs, shapes, flops_per_element, module_doc):
    return OpSpec(
        name=name,
        summary=summary,
        args=("x",),
        arg_shapes=("x[M, N]",),
        output="y[M, N], dtype of x",
        dims=("M", "N"),
        reference=ref,
        make_inputs=inputs,
        flops=lambda s: float(flops_per_element) * s["M"] * s["N"],
        bytes=lambda s, dt: 2.0 * s["M"] * s["N"] * dt,
        flops_text="%d*M*N" % flops_per_element,
        bytes_text="2*M*N * dt",
        tolerances=tol(1e-5, 1e-3, 2e-3),
        sizes={
            "cuda": [{"M": 128, "N": 512}, {"M": 1024, "N": 4096}, {"M": 4096, "N": 4096},
                     {"M": 8192, "N": 8192}],
            "cpu": [{"M": 64, "N": 256}, {"M": 512, "N": 1024}, {"M": 2048, "N": 2048}],
            "quick": [{"M": 8, "N": 64}, {"M": 64, "N": 1000}],
        },
        odd_sizes={
            "cuda": [{"M": 1023, "N": 1537}, {"M": 1, "N": 4097}, {"M": 3, "N": 5}],
            "cpu": [{"M": 97, "N": 1537}, {"M": 1, "N": 4097}],
            "quick": [{"M": 7, "N": 129}],
        },
        secret_ranges={
            "cuda": {"M": (1, 5000), "N": (1, 20000)},
            "cpu": {"M": (1, 300), "N": (1, 3000)},
            "quick": {"M": (1, 40), "N": (1, 500)},
        },
        headline={"cuda": {"M": 8192, "N": 8192}, "cpu": {"M": 2048, "N": 2048},
                  "quick": {"M": 512, "N": 1024}},
        from_shapes=shapes,
        constraints="any M, N >= 1 (the harness passes 2-D x; models' [B, T, D] are flattened)",
    )


def _bind(attrs):
    if attrs["approximate"] == "tanh":
        return dict(reference=reference, summary='F.gelu(x, approximate="tanh")')

    def exact(x):
        import torch.nn.functional as F
        return F.gelu(x)
    return dict(reference=exact, summary='F.gelu(x) (exact: x * Phi(x), erf)', flops=lambda s: 8.0 * s["M"] * s["N"],
                flops_text="8*M*N")


_TANH = ("newgelu", "gelutanh", "gelu_new", "fastgelu", "gelu_fast", "gelu_pytorch_tanh", "pytorchgelutanh")


def site_attrs(fact):
    """One call site's facts -> attrs (docs/contracts.md); Refused for other GELU variants."""
    args, name, where = fact_args(fact), fact_name(fact).lower(), site_label(fact)
    if "quickgelu" in name or "quick_gelu" in name:
        raise Refused("%s: QuickGELU (x * sigmoid(1.702 x)): not supported (exact or tanh GELU)" % where)
    found, approx = pick(args, "approximate")
    if found:
        return {"approximate": approx}
    if any(t in name for t in _TANH):
        return {"approximate": "tanh"}
    if args is not None and ("functional.gelu" in name or "torch.nn.modules.activation.gelu" in name
                             or "geluactivation" in name):
        return {"approximate": "none"}       # F.gelu's / nn.GELU's default: exact
    return {}


# Exact and tanh GELU differ by at most 4.7e-4 (x near -2.7): below what bf16/fp16 outputs resolve,
# so one float32 case is checked whatever TEST_DTYPES says.
SPEC = dataclasses.replace(
    elementwise_spec("gelu", 'F.gelu(x, approximate="tanh")', reference, make_inputs, from_shapes, 9, __doc__),
    attr_defs=ATTRS, binder=_bind, sites=site_attrs, contract_probe=("float32", "normal")).bind()
