"""GPT-2's projections as transformers writes them (pytorch_utils.Conv1D: a Linear whose weight is stored
[in, out] and applied with torch.addmm(bias, x, weight)), in two residual blocks with tanh GELU. On an
H100 (session 25) the plug routed no addmm call, so every GPT-2 matmul folder was "not pluggable"."""

import torch
from torch import nn


class Conv1D(nn.Module):
    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.randn(nx, nf) * 0.05)
        self.bias = nn.Parameter(torch.randn(nf) * 0.1)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        return x.view(size_out)


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = Conv1D(4 * d, d)
        self.c_proj = Conv1D(d, 4 * d)

    def forward(self, x):
        return self.c_proj(torch.nn.functional.gelu(self.c_fc(x), approximate="tanh"))


class Model(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.h = nn.ModuleList([MLP(d) for _ in range(2)])

    def forward(self, x):
        for block in self.h:
            x = x + block(x)
        return x


def get_model():
    torch.manual_seed(0)
    return Model()


def get_inputs():
    return [torch.randn(2, 12, 32)]
