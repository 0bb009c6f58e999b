#!/usr/bin/env python3
"""GPU check of the bmm folder (#38 item 3, docs/contracts.md "bmm"): the Triton starter in both layouts
against torch.bmm (fp32/bf16/fp16, odd sizes, a batch over the grid's 65535 limit, a transposed operand
read in place), a kernel of the wrong layout caught by the judge, and the plug on a GPT-2-like block on
CUDA: every batched matmul routed to the starters with parity, eager vs plugged forward times.

    python3 tests/bench/bmm_gpu.py            # (the harness's bf16 runs: tests/bench/contract_gpu.py --only bmm)

Run on the GPU machine, not in ctest: the CPU side is tests/agent/harness/test_bmm.py in CI.
"""

import importlib.util
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "agent", "python"))

import torch  # noqa: E402

from harness import bench, extract  # noqa: E402
from modelplug import plug  # noqa: E402

TMP = tempfile.mkdtemp(prefix="bmm-gpu-")


def starter(bt, name):
    out = extract.handle({"op_type": "bmm", "device": "cuda", "dtype": "bfloat16",
                          "shapes": [[8, 12, 256, 64], [8, 12, 64, 256]], "attrs": {"b_transposed": bt}})
    path = os.path.join(TMP, name + ".py")
    with open(path, "w") as f:
        f.write(out["kernel_py"])
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod, path


def correctness(mods):
    tol = {torch.float32: 1e-4, torch.bfloat16: 2e-2, torch.float16: 1e-2}
    shapes = [(96, 1024, 1024, 64), (96, 1024, 64, 1024), (768, 197, 197, 64), (5, 97, 131, 67), (1, 1, 4097, 80),
              (70000, 16, 16, 16)]
    bad = 0
    for dtype, t in tol.items():
        for batch, M, N, K in shapes:
            g = torch.Generator(device="cuda").manual_seed(batch + M)
            A = torch.randn(batch, M, K, device="cuda", generator=g).to(dtype)
            kt = torch.randn(batch, N, K, device="cuda", generator=g).to(dtype) * K ** -0.5
            ref = torch.bmm(A.double(), kt.double().transpose(1, 2))
            for bt, mod in mods.items():
                B = kt if bt else kt.transpose(1, 2).contiguous()
                out = mod.kernel_fn(A, B)
                err = float(((out.double() - ref).abs() / (ref.abs() + 1)).max())
                ok = err <= t and out.dtype == dtype and out.shape == (batch, M, N)
                bad += not ok
                print("%-8s b_transposed=%-5s %-22s max rel err %.2e %s" % (str(dtype)[6:], bt, (batch, M, N, K), err,
                                                                         "ok" if ok else "FAIL"))
    return bad


def judge(paths):
    """Each layout's starter under its own contract passes; under the other layout's it is incorrect."""
    bad = 0
    for bt, path in paths.items():
        for contract_bt in (bt, not bt):
            r = bench.run({"kernel_path": path, "device": "cuda", "quick": True, "dtype": "bfloat16",
                           "contract": {"op_type": "bmm", "attrs": {"b_transposed": contract_bt}}})
            want = "ok" if contract_bt == bt else "incorrect"
            bad += r["status"] != want
            print("judge: b_transposed=%s starter under a b_transposed=%s folder: %s (want %s) %s" % (
                bt, contract_bt, r["status"], want, (r.get("failure") or "")[:100]))
    return bad


class Attention(torch.nn.Module):
    def __init__(self, d=768, h=12):
        super().__init__()
        self.h, self.qkv, self.proj = h, torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = (t.view(b, s, self.h, d // self.h).transpose(1, 2) for t in self.qkv(x).split(d, dim=2))
        k = k.contiguous()
        p = torch.softmax((q @ k.transpose(-2, -1)) * (d // self.h) ** -0.5, dim=-1)
        return self.proj((p @ v).transpose(1, 2).reshape(b, s, d))


def in_model(mods):
    import triton.testing
    model = torch.nn.Sequential(*[Attention() for _ in range(4)]).cuda().to(torch.bfloat16).eval()
    x = torch.randn(8, 1024, 768, device="cuda", dtype=torch.bfloat16)
    sites = ["%d" % i for i in range(4)]
    with torch.no_grad():
        eager = model(x)
        t_eager = triton.testing.do_bench(lambda: model(x), return_mode="median")
        kernels = [plug.Kernel("bmm_%s" % bt, "bmm", m.kernel_fn, sites, torch.bfloat16, contract=m.CONTRACT)
                   for bt, m in mods.items()]
        p = plug.Plugged(model, kernels)
        try:
            ours = model(x)
            t_ours = triton.testing.do_bench(lambda: model(x), return_mode="median")
        finally:
            p.restore()
    err = float((ours.float() - eager.float()).abs().max() / eager.float().abs().max())
    reports = [k.report() for k in kernels]
    routed = [r["routed_calls"] for r in reports]
    fallbacks = [r["fallback_calls"] for r in reports]
    print("plug: routed %s (each layout once per block and run), fallbacks %s, max err / max |y| %.2e" % (
        routed, fallbacks, err))
    print("GPT-2-like attention x4 (batch 8, 1024 tokens, bf16): eager %.3f ms, bmm starters plugged %.3f ms "
          "(%.2fx)" % (t_eager, t_ours, t_eager / t_ours))
    return int(any(f for f in fallbacks) or err > 3e-2 or min(routed) == 0)


def main():
    print("GPU:", torch.cuda.get_device_name(0), "torch", torch.__version__)
    loaded = {bt: starter(bt, "bmm_gpu_%d" % bt) for bt in (False, True)}
    mods = {bt: m for bt, (m, _) in loaded.items()}
    bad = correctness(mods) + judge({bt: p for bt, (_, p) in loaded.items()}) + in_model(mods)
    print("FAILED: %d check(s)" % bad if bad else "all bmm GPU checks passed")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
