"""What the held-out model files (hf_*.py, timm_*.py but the two measured ones) share: the device the
profiler asked for, token inputs, the dtype. Not a model file itself (no get_model); each model file puts
this folder on sys.path, which the profiler's and verify's sandboxes mount beside the model file."""
import os

import torch


def on_gpu():
    device = os.environ.get("AUTOKERNEL_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    return device == "cuda"


def sizes(gpu, cpu):
    return gpu if on_gpu() else cpu


def tokens(s):
    """[batch, seq] token ids below the vocabulary size."""
    return [torch.randint(0, s["vocab"], (s["batch"], s["seq"]))]


def images(gpu_batch):
    return [torch.randn(gpu_batch if on_gpu() else 2, 3, 224, 224)]


def dtype():
    return torch.bfloat16 if on_gpu() else torch.float32
