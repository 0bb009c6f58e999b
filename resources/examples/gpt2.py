"""GPT-2-style decoder (pre-LayerNorm, GELU MLP, causal self-attention), random weights.

Small on CPU (runs in well under a second), GPT-2-medium-like on a GPU (d 1024, 16 heads, 12 blocks,
batch 8 x 1024 tokens). Sizes follow AUTOKERNEL_DEVICE, which the profiler sets.
"""
import math
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def _on_gpu():
    device = os.environ.get("AUTOKERNEL_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    return device == "cuda"


def _config():
    if _on_gpu():
        return dict(vocab=50257, d=1024, heads=16, layers=12, seq=1024, batch=8)
    return dict(vocab=2048, d=128, heads=4, layers=2, seq=64, batch=2)


def attention(q, k, v):
    """Causal attention; SDPA where torch has it (2.0+), the explicit softmax form otherwise."""
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    if sdpa is not None:
        return sdpa(q, k, v, is_causal=True)
    s = q.shape[-2]
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
    scores = scores.masked_fill(mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


class CausalSelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        y = attention(q, k, v).transpose(1, 2).reshape(b, s, d)
        return self.proj(y)


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.proj(F.gelu(self.fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT2(nn.Module):
    def __init__(self, vocab, d, heads, layers, seq):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(seq, d)
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)

    def forward(self, idx):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def get_model():
    c = _config()
    return GPT2(c["vocab"], c["d"], c["heads"], c["layers"], c["seq"])


def get_inputs():
    c = _config()
    return [torch.randint(0, c["vocab"], (c["batch"], c["seq"]))]


def get_dtype():
    return torch.bfloat16 if _on_gpu() else torch.float32
