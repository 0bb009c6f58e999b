"""timm's vit_base_patch16_224 built without pretrained weights (no download): patch embedding,
12 pre-norm blocks with fused SDPA attention, LayerNorm (eps 1e-6) and exact GELU. Batch 64 on a
GPU, 2 on a CPU. Needs `timm`.
"""
import os

import torch


def _on_gpu():
    device = os.environ.get("AUTOKERNEL_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    return device == "cuda"


def get_model():
    import timm
    return timm.create_model("vit_base_patch16_224", pretrained=False)


def get_inputs():
    return [torch.randn(64 if _on_gpu() else 2, 3, 224, 224)]


def get_dtype():
    return torch.bfloat16 if _on_gpu() else torch.float32
