"""Host cost of the residual add + norm region's plug (#40), on the CPU: a timm-style ViT stack (each
block `x + drop_path(ls(attn(norm1(x))))`, then the MLP's; LayerScale and DropPath are nn.Identity at
inference) with an add + LayerNorm region at every residual add that feeds a norm, 2 per block. The
region's kernel is the two PyTorch ops eager runs (the add, F.layer_norm; handed back as the pair the
region reads where a real kernel returns one [2, M, N] tensor), so eager + the plug minus eager is what
the plug costs a forward: the site's
TorchFunctionMode entered per block and stepped aside around its children, the add's adapter, the
norm's forward handing back the kernel's output.

    /usr/bin/python3 tests/bench/region_overhead.py [--blocks 6] [--rounds 9] [--plug-path DIR] [--json]

--plug-path DIR imports modelplug from DIR instead (another checkout's agent/python: before/after).
Thread CPU time per forward, medians over rounds that alternate eager and plugged.
"""

import argparse
import importlib
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
D = 32


def build(torch, blocks):
    nn = torch.nn

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.act, self.fc2 = nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)

        def forward(self, x):
            q, k, v = self.qkv(x).chunk(3, -1)
            return self.proj(torch.softmax(q @ k.transpose(-1, -2), -1) @ v)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.attn = nn.LayerNorm(D, eps=1e-6), Attention()
            self.ls1, self.drop_path1 = nn.Identity(), nn.Identity()
            self.norm2, self.mlp = nn.LayerNorm(D, eps=1e-6), Mlp()
            self.ls2, self.drop_path2 = nn.Identity(), nn.Identity()

        def forward(self, x):
            x = x + self.drop_path1(self.ls1(self.attn(self.norm1(x))))
            return x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(*[Block() for _ in range(blocks)])
            self.norm = nn.LayerNorm(D, eps=1e-6)

        def forward(self, x):
            return self.norm(self.blocks(x))

    sites = []
    for i in range(blocks):
        sites.append("blocks.%d.norm2@add:blocks.%d#0" % (i, i))
        sites.append("blocks.%d.norm1@add:blocks.%d#1" % (i + 1, i) if i + 1 < blocks else "norm@add:blocks.%d#1" % i)
    return Stack().eval(), sites


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--blocks", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--reps", type=int, default=100, help="forwards per sample")
    ap.add_argument("--plug-path", default=os.path.join(ROOT, "agent", "python"))
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    sys.path.insert(0, a.plug_path)
    import torch
    import torch.nn.functional as F
    plug = importlib.import_module("modelplug.plug")
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model, sites = build(torch, a.blocks)
    x = torch.randn(2, 8, D)

    def kernel_fn(x, r, w, b):
        # eager's two ops; the region reads out[0] (the sum) and out[1] (the norm): a pair serves as well
        h = x + r
        return h, F.layer_norm(h, (x.shape[-1],), w, b, 1e-6)

    kernel = plug.Kernel("02-add_layernorm", "add_layernorm", kernel_fn, sites, torch.float32,
                         contract={"callable": "region:add_layernorm", "attrs": {"eps": 1e-6, "bias": True}})

    def per_forward_us():
        t = time.thread_time()
        for _ in range(a.reps):
            model(x)
        return (time.thread_time() - t) / a.reps * 1e6

    samples = {"eager": [], "plugged": []}
    with torch.no_grad():
        want = model(x)
        for r in range(a.rounds):
            for v in (("eager", "plugged") if r % 2 == 0 else ("plugged", "eager")):
                handle = plug.Plugged(model, [kernel]) if v == "plugged" else None
                model(x)
                samples[v].append(per_forward_us())
                if handle is not None:
                    got = model(x)
                    handle.restore()
    if kernel.fallbacks or not kernel.routed:
        raise SystemExit("the region did not route every call: %s" % kernel.fallbacks)
    err = float((got - want).abs().max())
    med = {v: statistics.median(s) for v, s in samples.items()}
    diffs = sorted(p - e for p, e in zip(samples["plugged"], samples["eager"]))
    row = {"blocks": a.blocks, "sites": len(sites), "eager_us": med["eager"], "plugged_us": med["plugged"],
           "plug_us_per_forward": statistics.median(diffs), "plug_us_per_site": statistics.median(diffs) / len(sites),
           "spread_per_site": [diffs[0] / len(sites), diffs[-1] / len(sites)], "max_abs_err": err,
           "plug_path": a.plug_path, "torch": torch.__version__}
    if a.json:
        print(json.dumps(row))
        return
    print("%d blocks, %d region sites (CPU, one thread, torch %s): eager %.0f us, eager + the plug %.0f us per "
          "forward; the plug %.1f us per site (%.1f..%.1f over rounds); max err %.2g"
          % (a.blocks, len(sites), torch.__version__, med["eager"], med["plugged"], row["plug_us_per_site"],
             row["spread_per_site"][0], row["spread_per_site"][1], err))


if __name__ == "__main__":
    main()
