"""#43 items 3 and 5 on a CUDA machine: the precision probe and the cold re-check with Triton kernels.

  python3 tests/bench/precision_recheck_gpu.py OUTDIR

Part 1 (precision): the Triton matmul starter in bf16, fp16 and fp32 (must not be flagged), a Triton
matmul whose K loop accumulates in fp16 (out_dtype=tl.float16: flagged, refused, then kept when
allowed) and an fp32 matmul with input_precision="tf32" (flagged "tf32"); for each, what cuBLAS (the
reference) does on the same probe. Part 2 (re-check): the Triton starters for matmul (bf16) and softmax
re-checked cold with 20 pairs: p10 / median / p90 and the verdict. Prints markdown tables; writes
precision_recheck.json under OUTDIR. Stops before ~480 s.
"""

import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "agent", "python"))
STARTERS = os.path.join(ROOT, "agent", "python", "harness", "starters", "triton")
T0 = time.time()

SHORTCUT = r'''
import torch
import triton
import triton.language as tl

KERNEL_TYPE = "matmul"
TEST_DTYPES = [%(dtypes)r]
TOLERANCES = {"float32": {"atol": 1e-3, "rtol": 1e-3}}


@triton.jit
def _mm(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr,
        BK: tl.constexpr, ACC16: tl.constexpr, TF32: tl.constexpr):
    pid_m, pid_n = tl.program_id(0), tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float16 if ACC16 else tl.float32)
    for k0 in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k0 + rk)[None, :] * sak,
                    mask=(rm[:, None] < M) & ((k0 + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k0 + rk)[:, None] * sbk + rn[None, :] * sbn,
                    mask=((k0 + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        if ACC16:
            acc = tl.dot(a, b, acc, out_dtype=tl.float16)
        elif TF32:
            acc = tl.dot(a, b, acc, input_precision="tf32")
        else:
            acc = tl.dot(a, b, acc, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


def kernel_fn(A, B):
    M, K = A.shape
    N = B.shape[1]
    C = torch.empty((M, N), dtype=A.dtype, device=A.device)
    grid = (triton.cdiv(M, 64), triton.cdiv(N, 64))
    _mm[grid](A, B, C, M, N, K, A.stride(0), A.stride(1), B.stride(0), B.stride(1), C.stride(0), C.stride(1),
              BM=64, BN=64, BK=32, ACC16=%(acc16)r, TF32=%(tf32)r)
    return C
'''


def bench(path, dtype, allow=False):
    from harness import bench as b
    r = b.run({"kernel_path": path, "device": "cuda", "dtype": dtype, "quick": True,
               "allow_reduced_precision": allow})
    p = r.get("precision") or {}
    return {"kernel": os.path.basename(path), "dtype": dtype, "allow": allow, "status": r.get("status"),
            "failure": (r.get("failure") or "")[:300], "precision": p.get("text"),
            "probes": p.get("probes"), "speedup": r.get("speedup")}


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp()
    kernels = {}
    for name, dt, acc16, tf32 in (("acc16_fp16.py", "float16", True, False), ("tf32_fp32.py", "float32", False, True),
                                  ("ieee_fp32.py", "float32", False, False)):
        kernels[name] = os.path.join(tmp, name)
        with open(kernels[name], "w") as f:
            f.write(SHORTCUT % {"dtypes": dt, "acc16": acc16, "tf32": tf32})
    rows = []
    for dt in ("bfloat16", "float16", "float32"):
        rows.append(bench(os.path.join(STARTERS, "matmul.py"), dt))
    rows.append(bench(kernels["acc16_fp16.py"], "float16"))
    rows.append(bench(kernels["acc16_fp16.py"], "float16", allow=True))
    rows.append(bench(kernels["tf32_fp32.py"], "float32"))
    rows.append(bench(kernels["ieee_fp32.py"], "float32"))
    print("| kernel | dtype | allowed | status | precision | reference on the probe |\n|---|---|---|---|---|---|")
    for r in rows:
        ref = ", ".join("%s: %s" % (p["dtype"], p["reference_flag"]) for p in r["probes"] or [])
        print("| %s | %s | %s | %s | %s | %s |" % (r["kernel"], r["dtype"], r["allow"], r["status"],
                                                   r["precision"] or r["failure"][:120], ref))
    checks = []
    from harness import recheck
    for name, dt in (("matmul.py", "bfloat16"), ("softmax.py", "bfloat16")):
        if time.time() - T0 > 400:
            break
        r = recheck.run({"kernel_path": os.path.join(STARTERS, name), "device": "cuda", "dtype": dt, "pairs": 20})
        checks.append(dict({k: r.get(k) for k in ("pairs", "p10", "median", "p90", "offered", "why", "latency_us",
                                                 "ref_latency_us", "timing_size")}, kernel=name, dtype=dt))
    print("\n| kernel | dtype | pairs | p10 | median | p90 | offered |\n|---|---|---|---|---|---|---|")
    for c in checks:
        print("| %s | %s | %s | %s | %s | %s | %s |" % (c["kernel"], c["dtype"], c["pairs"], c["p10"], c["median"],
                                                       c["p90"], c["offered"]))
    with open(os.path.join(out_dir, "precision_recheck.json"), "w") as f:
        json.dump({"precision": rows, "recheck": checks, "seconds": time.time() - T0}, f, indent=1, default=str)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
