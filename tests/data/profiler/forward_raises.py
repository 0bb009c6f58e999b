import torch


class Broken(torch.nn.Module):
    def forward(self, x):
        raise ValueError("shape mismatch in Broken.forward")


def get_model():
    return Broken()


def get_inputs():
    return [torch.randn(2, 4)]
