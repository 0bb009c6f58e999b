"""timm's convnext_tiny built without pretrained weights (no download):
depthwise 7x7 convolutions, LayerNorm over channels
(channels-last LayerNorm2d and F.layer_norm), exact GELU, layer scale. Batch 64 on a GPU, 2 on a CPU.
Held-out (#38's targets are checked on models nobody here wrote). Needs `timm`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout import dtype, images  # noqa: E402


def get_model():
    import timm
    return timm.create_model("convnext_tiny", pretrained=False)


def get_inputs():
    return images(64)


def get_dtype():
    return dtype()
