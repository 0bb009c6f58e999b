"""A user model file: two linears and a GELU, fp32 on CPU."""
import torch


def get_model():
    return torch.nn.Sequential(torch.nn.Linear(256, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 256))


def get_inputs():
    return [torch.randn(64, 256)]


def get_dtype():
    return torch.float32
