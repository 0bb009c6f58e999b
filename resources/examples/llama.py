"""LLaMA-style decoder written as plain torch: RMSNorm, rotary embeddings, grouped-query attention
and a SwiGLU MLP, random weights.

Small on CPU; on a GPU the size of the measured reference (8 layers, d 2048, 16 query / 4 KV heads,
SwiGLU 5632, vocab 32000, batch 4 x 2048 tokens). Sizes follow AUTOKERNEL_DEVICE.
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
        return dict(vocab=32000, d=2048, heads=16, kv_heads=4, hidden=5632, layers=8, seq=2048, batch=4)
    return dict(vocab=2048, d=128, heads=4, kv_heads=2, hidden=352, layers=2, seq=64, batch=2)


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(variance + self.eps)).to(x.dtype) * self.weight


class Rotary(nn.Module):
    """Interleaved-pair rotary embedding, as in the AutoKernel contract (cos, sin: [S, D/2])."""

    def __init__(self, head_dim, seq, base=10000.0):
        super().__init__()
        inv_freq = 1.0 / (base ** (torch.arange(0, head_dim, 2).float() / head_dim))
        angles = torch.outer(torch.arange(seq).float(), inv_freq)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x):
        s = x.shape[-2]
        cos, sin = self.cos[:s].to(x.dtype), self.sin[:s].to(x.dtype)
        x1, x2 = x[..., 0::2], x[..., 1::2]
        out = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
        return out.flatten(-2)


class Attention(nn.Module):
    def __init__(self, d, heads, kv_heads, seq):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d // heads
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.rotary = Rotary(self.head_dim, seq)

    def forward(self, x):
        b, s, d = x.shape
        q = self.wq(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        q, k = self.rotary(q), self.rotary(k)
        repeat = self.heads // self.kv_heads  # grouped-query attention: share each KV head
        k = k.repeat_interleave(repeat, dim=1)
        v = v.repeat_interleave(repeat, dim=1)
        sdpa = getattr(F, "scaled_dot_product_attention", None)
        if sdpa is not None:
            y = sdpa(q, k, v, is_causal=True)
        else:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.head_dim)
            mask = torch.ones(s, s, dtype=torch.bool, device=x.device).triu(1)
            y = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1) @ v
        return self.wo(y.transpose(1, 2).reshape(b, s, d))


class SwiGLU(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.w_gate = nn.Linear(d, hidden, bias=False)
        self.w_up = nn.Linear(d, hidden, bias=False)
        self.w_down = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.w_down(F.silu(self.w_gate(x)) * self.w_up(x))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attn_norm = RMSNorm(c["d"])
        self.attn = Attention(c["d"], c["heads"], c["kv_heads"], c["seq"])
        self.mlp_norm = RMSNorm(c["d"])
        self.mlp = SwiGLU(c["d"], c["hidden"])

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


class Llama(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.embed = nn.Embedding(c["vocab"], c["d"])
        self.layers = nn.ModuleList(Block(c) for _ in range(c["layers"]))
        self.norm = RMSNorm(c["d"])
        self.head = nn.Linear(c["d"], c["vocab"], bias=False)

    def forward(self, idx):
        x = self.embed(idx)
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x))


def get_model():
    return Llama(_config())


def get_inputs():
    c = _config()
    return [torch.randint(0, c["vocab"], (c["batch"], c["seq"]))]


def get_dtype():
    return torch.bfloat16 if _on_gpu() else torch.float32
