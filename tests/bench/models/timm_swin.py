"""timm's swin_tiny_patch4_window7_224 built without pretrained weights (no download):
shifted-window attention with a relative position
bias (an attn_mask tensor), LayerNorm, exact GELU, patch merging. Batch 64 on a GPU, 2 on a CPU.
Held-out (#38's targets are checked on models nobody here wrote). Needs `timm`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout import dtype, images  # noqa: E402


def get_model():
    import timm
    return timm.create_model("swin_tiny_patch4_window7_224", pretrained=False)


def get_inputs():
    return images(64)


def get_dtype():
    return dtype()
