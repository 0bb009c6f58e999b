"""A held-out-style model for region detection (#40), written the way transformers and timm write theirs
(transformers is not installed here): Llama decoder layers whose forward keeps `residual` and adds it
back (`hidden_states = residual + hidden_states`), LlamaRMSNorm with `variance_epsilon`, LlamaMLP with
gate_proj / up_proj / down_proj and an `act_fn` module (nn.SiLU), then ViT blocks (pre-norm nn.LayerNorm
eps 1e-6, fc1 -> nn.GELU -> fc2 with biases) and a final LayerNorm. Used by test_regions.py."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

B, S, D, HEADS, FFN, VOCAB = 2, 8, 32, 4, 48, 64


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size) + 0.1 * torch.randn(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class LlamaMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.gate_proj = nn.Linear(D, FFN, bias=False)
        self.up_proj = nn.Linear(D, FFN, bias=False)
        self.down_proj = nn.Linear(FFN, D, bias=False)
        self.act_fn = nn.SiLU()

    def forward(self, x):
        return self.down_proj(self.act_fn(self.gate_proj(x)) * self.up_proj(x))


class LlamaAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.q_proj, self.k_proj = nn.Linear(D, D, bias=False), nn.Linear(D, D, bias=False)
        self.v_proj, self.o_proj = nn.Linear(D, D, bias=False), nn.Linear(D, D, bias=False)

    def forward(self, hidden_states):
        b, s, _ = hidden_states.shape
        shape = (b, s, HEADS, D // HEADS)
        q, k, v = (p(hidden_states).view(shape).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(D // HEADS)
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        probs = F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return self.o_proj(torch.matmul(probs, v).transpose(1, 2).reshape(b, s, D))


class LlamaDecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn = LlamaAttention()
        self.mlp = LlamaMLP()
        self.input_layernorm = LlamaRMSNorm(D)
        self.post_attention_layernorm = LlamaRMSNorm(D)

    def forward(self, hidden_states):
        residual = hidden_states
        hidden_states = self.input_layernorm(hidden_states)
        hidden_states = self.self_attn(hidden_states)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = self.post_attention_layernorm(hidden_states)
        hidden_states = self.mlp(hidden_states)
        hidden_states = residual + hidden_states
        return hidden_states


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(D, FFN), nn.GELU(), nn.Linear(FFN, D)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class ViTBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm1 = nn.LayerNorm(D, eps=1e-6)
        self.proj = nn.Linear(D, D)
        self.norm2 = nn.LayerNorm(D, eps=1e-6)
        self.mlp = Mlp()

    def forward(self, x):
        x = x + self.proj(self.norm1(x))
        x = x + self.mlp(self.norm2(x))
        return x


class HeldOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, D)
        self.layers = nn.ModuleList(LlamaDecoderLayer() for _ in range(3))
        self.norm = LlamaRMSNorm(D)
        self.blocks = nn.ModuleList(ViTBlock() for _ in range(2))
        self.fc_norm = nn.LayerNorm(D, eps=1e-6)

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        x = self.norm(hidden_states)
        for block in self.blocks:
            x = block(x)
        return self.fc_norm(x)


def get_model():
    return HeldOut()


def get_inputs():
    return [torch.randint(0, VOCAB, (B, S))]


def get_dtype():
    return torch.float32
