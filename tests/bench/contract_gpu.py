#!/usr/bin/env python3
"""GPU check of the contract attributes (#38): every Triton starter, extracted for each semantic a real
model uses (the model's own shapes), through the full harness (every stage, bf16), then timed against
the model's own call (the bound reference, eager) with do_bench medians, L2 flushed.

    python3 tests/bench/contract_gpu.py [--only rmsnorm,gelu] [--quick]

Prints one markdown table; writes contract_gpu.json to $OUT when set. Run on the GPU machine (not in
ctest): the CPU starters' semantics are covered by tests/agent/harness/test_contracts.py in CI.
"""

import argparse
import json
import os
import sys
import tempfile
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "agent", "python"))

import torch  # noqa: E402

from harness import bench, extract, ops  # noqa: E402
from harness.checks.plan import Case  # noqa: E402

# (op, attrs, one call's shapes): the semantics of transformers' Llama / Gemma and timm's ViT-B/16 at
# the sizes those models run (batch 4x1024 tokens, d 2048; ViT batch 64, 197 tokens, d 768).
VARIANTS = [
    ("rmsnorm", {"eps": 1e-6, "offset": 0.0}, [[4096, 2048], [2048]]),
    ("rmsnorm", {"eps": 1e-5, "offset": 1.0}, [[4096, 2048], [2048]]),
    ("layernorm", {"eps": 1e-5, "bias": True}, [[12608, 768], [768], [768]]),
    ("layernorm", {"eps": 1e-6, "bias": True}, [[12608, 768], [768], [768]]),
    ("layernorm", {"eps": 1e-6, "bias": False}, [[12608, 768], [768]]),
    ("gelu", {"approximate": "tanh"}, [[12608, 3072]]),
    ("gelu", {"approximate": "none"}, [[12608, 3072]]),
    ("rotary_embedding", {"layout": "interleaved"}, [[4, 16, 1024, 128], [1024, 64], [1024, 64]]),
    ("rotary_embedding", {"layout": "neox"}, [[4, 16, 1024, 128], [1024, 64], [1024, 64]]),
    ("flash_attention", {"causal": True, "scale": None}, [[4, 16, 1024, 128]] * 3),
    ("flash_attention", {"causal": False, "scale": None}, [[64, 12, 197, 64]] * 3),
    ("flash_attention", {"causal": False, "scale": 0.125}, [[4, 16, 2048, 128]] * 3),
    ("matmul", {"bias": False, "activation": "none"}, [[4096, 2048], [2048, 2048]]),
    ("matmul", {"bias": True, "activation": "none"}, [[12608, 768], [768, 2304]]),
    ("matmul", {"bias": True, "activation": "gelu"}, [[12608, 768], [768, 3072]]),
    ("matmul", {"bias": False, "activation": "silu"}, [[4096, 2048], [2048, 5632]]),
    # Hand-written attention (bmm): ViT-B/16's q @ k^T (k's own storage) and P @ V, GPT-2's at 1024 tokens.
    ("bmm", {"b_transposed": True}, [[64, 12, 197, 64], [64, 12, 64, 197]]),
    ("bmm", {"b_transposed": False}, [[64, 12, 197, 197], [64, 12, 197, 64]]),
    ("bmm", {"b_transposed": True}, [[8, 12, 1024, 64], [8, 12, 64, 1024]]),
    ("bmm", {"b_transposed": False}, [[8, 12, 1024, 1024], [8, 12, 1024, 64]]),
]


def fmt(v, spec="%.3g"):
    return "-" if v is None or v != v else spec % v


def timed(spec, size, fn_inputs, kernel):
    import triton.testing
    ref = spec.reference
    t_ref = triton.testing.do_bench(lambda: ref(*fn_inputs), warmup=25, rep=100, return_mode="median") * 1e3
    t_k = triton.testing.do_bench(lambda: kernel(*fn_inputs), warmup=25, rep=100, return_mode="median") * 1e3
    return t_ref, t_k


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--only", default="")
    p.add_argument("--quick", action="store_true")
    a = p.parse_args()
    only = {s for s in a.only.split(",") if s}
    rows = []
    print("GPU:", torch.cuda.get_device_name(0), "torch", torch.__version__)
    print("\n| op | attrs | harness | bench s | failure | eager (model's call) us | starter us | starter vs eager |")
    print("|---|---|---|---|---|---|---|---|")
    tmp = tempfile.mkdtemp()
    for i, (op, attrs, shapes) in enumerate(VARIANTS):
        if only and op not in only:
            continue
        row = {"op": op, "attrs": attrs, "shapes": shapes}
        try:
            out = extract.handle({"op_type": op, "device": "cuda", "dtype": "bfloat16", "shapes": shapes,
                                  "attrs": attrs, "name": "contract_gpu"})
            path = os.path.join(tmp, "k%d_%s.py" % (i, op))
            with open(path, "w") as f:
                f.write(out["kernel_py"])
            t0 = time.perf_counter()
            r = bench.run({"kernel_path": path, "device": "cuda", "quick": a.quick, "dtype": "bfloat16",
                           "contract": {"attrs": out["contract"]["attrs"]}})
            row.update(status=r["status"], failure=r.get("failure", ""), bench_s=time.perf_counter() - t0)
            spec = ops.get(op).bind(out["contract"]["attrs"])
            size = out["test_sizes"][0]
            case = Case("t", spec, size, "bfloat16", "normal", 7).materialize("cuda")
            import importlib.util
            m_spec = importlib.util.spec_from_file_location("cg%d" % i, path)
            mod = importlib.util.module_from_spec(m_spec)
            sys.modules["cg%d" % i] = mod
            m_spec.loader.exec_module(mod)
            row["eager_us"], row["starter_us"] = timed(spec, size, case.inputs, mod.kernel_fn)
        except Exception as e:  # noqa: BLE001
            row.setdefault("status", "crash")
            row["failure"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
            row["traceback"] = traceback.format_exc()
        rows.append(row)
        e, s = row.get("eager_us"), row.get("starter_us")
        print("| %s | %s | %s | %.1f | %s | %s | %s | %s |" % (
            op, ", ".join("%s=%s" % kv for kv in attrs.items()), row.get("status"), row.get("bench_s", 0.0),
            (row.get("failure") or "")[:120].replace("|", "/"), fmt(e, "%.1f"), fmt(s, "%.1f"),
            fmt(e / s if e and s else None, "%.2fx")))
        sys.stdout.flush()
    out_dir = os.environ.get("OUT")
    if out_dir:
        with open(os.path.join(out_dir, "contract_gpu.json"), "w") as f:
            json.dump(rows, f, indent=1, default=str)


if __name__ == "__main__":
    main()
