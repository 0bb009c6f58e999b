"""BERT-style encoder (post-LayerNorm, GELU MLP, bidirectional attention) with a classification
head and a cross-entropy loss on random labels, random weights.

Small on CPU; BERT-base-like on a GPU (d 768, 12 heads, 12 layers, batch 32 x 512 tokens).
Sizes follow AUTOKERNEL_DEVICE.
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
        return dict(vocab=30522, d=768, heads=12, layers=12, seq=512, batch=32, classes=1000)
    return dict(vocab=2048, d=128, heads=4, layers=2, seq=64, batch=2, classes=512)


class SelfAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        b, s, d = x.shape
        h = self.heads
        q, k, v = (lin(x).view(b, s, h, d // h).transpose(1, 2) for lin in (self.q, self.k, self.v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(d // h)
        y = torch.softmax(scores, dim=-1) @ v
        return self.out(y.transpose(1, 2).reshape(b, s, d))


class Layer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = SelfAttention(d, heads)
        self.ln1 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)
        self.ln2 = nn.LayerNorm(d)

    def forward(self, x):
        x = self.ln1(x + self.attn(x))
        return self.ln2(x + self.fc2(F.gelu(self.fc1(x))))


class Bert(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.tok = nn.Embedding(c["vocab"], c["d"])
        self.pos = nn.Embedding(c["seq"], c["d"])
        self.ln = nn.LayerNorm(c["d"])
        self.layers = nn.ModuleList(Layer(c["d"], c["heads"]) for _ in range(c["layers"]))
        self.classifier = nn.Linear(c["d"], c["classes"])

    def forward(self, idx, labels):
        pos = torch.arange(idx.shape[1], device=idx.device)
        x = self.ln(self.tok(idx) + self.pos(pos))
        for layer in self.layers:
            x = layer(x)
        logits = self.classifier(x).flatten(0, 1)
        return F.cross_entropy(logits, labels.flatten())


def get_model():
    return Bert(_config())


def get_inputs():
    c = _config()
    idx = torch.randint(0, c["vocab"], (c["batch"], c["seq"]))
    labels = torch.randint(0, c["classes"], (c["batch"], c["seq"]))
    return [idx, labels]


def get_dtype():
    return torch.bfloat16 if _on_gpu() else torch.float32
