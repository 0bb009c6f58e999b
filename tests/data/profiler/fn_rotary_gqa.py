"""transformers' Llama rotary under grouped-query attention: apply_rotary_pos_emb(q, k, cos, sin) rotates q
(4 heads) and k (2 K/V heads) in one call, so its aten ops come in two shapes. It is still one call of the
model's own function: one rotary folder, not one per shape (two would each claim every call site while
the plug routes the call through one of them)."""
import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(q, k, cos, sin):
    return (q * cos) + (rotate_half(q) * sin), (k * cos) + (rotate_half(k) * sin)


class Attention(torch.nn.Module):
    def __init__(self, dim=256, heads=4, kv_heads=2):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, dim // heads
        self.q = torch.nn.Linear(dim, dim, bias=False)
        self.kv = torch.nn.Linear(dim, 2 * kv_heads * self.hd, bias=False)
        self.out = torch.nn.Linear(dim, dim, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        emb = torch.outer(torch.arange(512).float(), inv).repeat(1, 2)
        self.register_buffer("cos", emb.cos(), persistent=False)
        self.register_buffer("sin", emb.sin(), persistent=False)

    def forward(self, x):
        b, s, d = x.shape
        q = self.q(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        k, v = self.kv(x).view(b, s, 2, self.kv_heads, self.hd).permute(2, 0, 3, 1, 4)
        q, k = apply_rotary_pos_emb(q, k, self.cos[:s], self.sin[:s])
        groups = self.heads // self.kv_heads
        k, v = k.repeat_interleave(groups, dim=1), v.repeat_interleave(groups, dim=1)
        att = torch.softmax(q @ k.transpose(-1, -2) / self.hd ** 0.5, dim=-1)
        return self.out((att @ v).transpose(1, 2).reshape(b, s, d))


def get_model():
    return torch.nn.Sequential(Attention(), Attention())


def get_inputs():
    return [torch.randn(2, 256, 256)]


def get_dtype():
    return torch.float32
