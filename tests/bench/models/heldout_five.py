"""Issue #15's held-out model: five ops side by side, no model code the starters were tuned on.

softmax, RMSNorm and LayerNorm on 8192x8192, cross-entropy on 8192x128256 logits and a linear of
4096^3 (x[4096, 4096] @ W[4096, 4096]^T, no bias); bf16 on a GPU. On a CPU the same five ops at
toy sizes in fp32 (for testing the scripts without a GPU). RMSNorm is written as models write it
(the llama example's upcast expression, which is also the harness's rmsnorm reference), so it is
classified by its module, in the dtype the module gets.

    autokernel-cli profile --model tests/bench/models/heldout_five.py --out RUN --top 5
"""
import os

import torch
import torch.nn.functional as F
from torch import nn


def _on_gpu():
    device = os.environ.get("AUTOKERNEL_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    return device == "cuda"


def _sizes():
    if _on_gpu():
        return dict(rows=8192, cols=8192, batch=8192, vocab=128256, m=4096, n=4096, k=4096)
    return dict(rows=64, cols=512, batch=64, vocab=2048, m=64, n=96, k=128)


class Softmax(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(variance + self.eps)).to(x.dtype) * self.weight


class CrossEntropy(nn.Module):
    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets)


class HeldOutFive(nn.Module):
    def __init__(self, s):
        super().__init__()
        self.softmax = Softmax()
        self.rmsnorm = RMSNorm(s["cols"])
        self.layernorm = nn.LayerNorm(s["cols"])
        self.cross_entropy = CrossEntropy()
        self.linear = nn.Linear(s["k"], s["n"], bias=False)

    def forward(self, x_softmax, x_rmsnorm, x_layernorm, logits, targets, x_linear):
        return (self.softmax(x_softmax), self.rmsnorm(x_rmsnorm), self.layernorm(x_layernorm),
                self.cross_entropy(logits, targets), self.linear(x_linear))


def get_model():
    return HeldOutFive(_sizes())


def get_inputs():
    s = _sizes()
    return [torch.randn(s["rows"], s["cols"]), torch.randn(s["rows"], s["cols"]),
            torch.randn(s["rows"], s["cols"]), torch.randn(s["batch"], s["vocab"]),
            torch.randint(0, s["vocab"], (s["batch"],)), torch.randn(s["m"], s["k"])]


def get_dtype():
    return torch.bfloat16 if _on_gpu() else torch.float32
