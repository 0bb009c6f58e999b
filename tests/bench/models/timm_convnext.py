"""timm's convnext_tiny built without pretrained weights (no download):
depthwise 7x7 convolutions, LayerNorm over channels
(channels-last LayerNorm2d and F.layer_norm), exact GELU, layer scale. Batch 64 on a GPU, 2 on a CPU.
Held-out (#38's targets are checked on models nobody here wrote). Needs `timm`.
"""
import os

import torch


def _on_gpu():
    device = os.environ.get("AUTOKERNEL_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    return device == "cuda"


def get_model():
    import timm
    return timm.create_model("convnext_tiny", pretrained=False)


def get_inputs():
    return [torch.randn(64 if _on_gpu() else 2, 3, 224, 224)]


def get_dtype():
    return torch.bfloat16 if _on_gpu() else torch.float32
