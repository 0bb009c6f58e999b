"""A user model file whose rotary embedding is written as functions, the way transformers' Llama does
it (apply_rotary_pos_emb / rotate_half with torch.cat, called inside the attention module, no module
of its own): the profiler must classify those ops by the functions on their stacks."""
import torch
import torch.nn.functional as F  # noqa: F401 - written as transformers' modeling files are


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class Attention(torch.nn.Module):
    def __init__(self, dim=256, heads=4):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.qkv = torch.nn.Linear(dim, 3 * dim, bias=False)
        self.out = torch.nn.Linear(dim, dim, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(512).float(), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(x).view(b, s, 3, self.heads, self.hd).permute(2, 0, 3, 1, 4)
        q, k = apply_rotary_pos_emb(q, k, self.cos[:s], self.sin[:s])
        att = torch.softmax(q @ k.transpose(-1, -2) / self.hd ** 0.5, dim=-1)
        return self.out((att @ v).transpose(1, 2).reshape(b, s, d))


def get_model():
    return torch.nn.Sequential(Attention(), Attention())


def get_inputs():
    return [torch.randn(2, 256, 256)]


def get_dtype():
    return torch.float32
