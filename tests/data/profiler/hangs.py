import time

import torch


class Slow(torch.nn.Module):
    def forward(self, x):
        time.sleep(3600)
        return x


def get_model():
    return Slow()


def get_inputs():
    return [torch.randn(2, 4)]
