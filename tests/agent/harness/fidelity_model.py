"""A tiny CPU model with the semantics real models use (issue #38): a Gemma-style RMSNorm `(1 + w)` with
eps 1e-5, nn.LayerNorm eps 1e-6 and a functional layer_norm without bias, NeoX rotary through
transformers-style rotate_half / apply_rotary_pos_emb functions (cos/sin [B, S, D]), attention as
F.scaled_dot_product_attention (not causal, an explicit scale) in layer 0 and as bmm + scaled softmax in
layer 1 (torch.bmm of q and k.transpose(1, 2): a transposed right operand; of the probabilities and v: a
contiguous one; torch 1.13 has no F.scaled_dot_product_attention, and there layer 0 is the same), nn.Linear with bias, exact nn.GELU(). Used by test_plugcheck.py through akprofile and the
plugcheck op, as a user's model file would be."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

B, S, DIM, HEADS = 2, 16, 32, 4      # S != head dim: the scores and P @ V are two bmm shapes
HEAD_DIM = DIM // HEADS
SCALE = 0.5 / math.sqrt(HEAD_DIM)       # not the default 1/sqrt(D)


class GemmaRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.randn(dim) * 0.2)

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float())
        return (output * (1.0 + self.weight.float())).type_as(x)


class NoBiasLayerNorm(nn.Module):
    """LayerNorm without bias written functionally (torch 1.13's nn.LayerNorm has no bias=False)."""

    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return F.layer_norm(x, (x.shape[-1],), self.weight, None, self.eps)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin, position_ids=None, unsqueeze_dim=1):
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        self.register_buffer("inv_freq", 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim)), persistent=False)

    def forward(self, x, position_ids):
        freqs = (self.inv_freq[None, :, None].float() @ position_ids[:, None, :].float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


class Attention(nn.Module):
    def __init__(self, use_sdpa):
        super().__init__()
        self.use_sdpa = use_sdpa
        self.q_proj, self.k_proj = nn.Linear(DIM, DIM), nn.Linear(DIM, DIM)
        self.v_proj, self.o_proj = nn.Linear(DIM, DIM), nn.Linear(DIM, DIM)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        shape = (b, s, HEADS, HEAD_DIM)
        q = self.q_proj(x).view(shape).transpose(1, 2)
        k = self.k_proj(x).view(shape).transpose(1, 2)
        v = self.v_proj(x).view(shape).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        if self.use_sdpa and hasattr(F, "scaled_dot_product_attention"):
            out = F.scaled_dot_product_attention(q, k, v, scale=SCALE)
        else:
            qf, kf, vf = (t.reshape(b * HEADS, s, HEAD_DIM) for t in (q, k, v))
            probs = F.softmax(torch.bmm(qf, kf.transpose(1, 2)) * SCALE, dim=-1)
            out = torch.bmm(probs, vf).view(b, HEADS, s, HEAD_DIM)
        return self.o_proj(out.transpose(1, 2).reshape(b, s, DIM))


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, use_sdpa):
        super().__init__()
        self.input_layernorm = GemmaRMSNorm(DIM)
        self.attn = Attention(use_sdpa)
        self.post_layernorm = nn.LayerNorm(DIM, eps=1e-6)
        self.mlp = MLP()

    def forward(self, x, cos, sin):
        x = x + self.attn(self.input_layernorm(x), cos, sin)
        return x + self.mlp(self.post_layernorm(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.rotary = RotaryEmbedding(HEAD_DIM)
        self.layers = nn.ModuleList([Block(use_sdpa=True), Block(use_sdpa=False)])
        self.norm = NoBiasLayerNorm(DIM)

    def forward(self, x):
        position_ids = torch.arange(x.shape[1], device=x.device).unsqueeze(0).expand(x.shape[0], -1)
        cos, sin = self.rotary(x, position_ids)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.norm(x)


def get_model():
    return Model()


def get_inputs():
    return [torch.randn(B, S, DIM)]


def get_dtype():
    return torch.float32
