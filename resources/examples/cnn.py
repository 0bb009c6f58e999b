"""Small ResNet-style CNN (conv, batch norm, ReLU, residual blocks, global pooling), random weights.

32x32 images, batch 4 on CPU; 224x224, batch 64 and wider channels on a GPU.
Sizes follow AUTOKERNEL_DEVICE.
"""
import os

import torch
import torch.nn as nn
import torch.nn.functional as F


def _on_gpu():
    device = os.environ.get("AUTOKERNEL_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    return device == "cuda"


def _config():
    if _on_gpu():
        return dict(batch=64, size=224, width=64, classes=1000)
    return dict(batch=4, size=32, width=16, classes=10)


class ResidualBlock(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.skip = nn.Identity() if stride == 1 and cin == cout else nn.Sequential(
            nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(y)) + self.skip(x))


class SmallResNet(nn.Module):
    def __init__(self, width, classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.stages = nn.Sequential(
            ResidualBlock(width, width, 1),
            ResidualBlock(width, 2 * width, 2),
            ResidualBlock(2 * width, 4 * width, 2),
        )
        self.fc = nn.Linear(4 * width, classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def get_model():
    c = _config()
    return SmallResNet(c["width"], c["classes"])


def get_inputs():
    c = _config()
    return [torch.randn(c["batch"], 3, c["size"], c["size"])]


def get_dtype():
    return torch.bfloat16 if _on_gpu() else torch.float32
