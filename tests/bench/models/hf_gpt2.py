"""transformers' GPT2LMHeadModel: Conv1D projections (addmm with bias, weight [in, out]), tanh GELU
(gelu_new), LayerNorm eps 1e-5, causal SDPA.
Held-out (#38's targets are checked on models nobody here wrote): built from a config, random weights,
no download; a size that profiles in seconds on a GPU, tiny on a CPU. Needs `transformers`.
"""
import os

import torch


def _on_gpu():
    device = os.environ.get("AUTOKERNEL_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    return device == "cuda"


def _sizes():
    return {'vocab': 50257, 'd': 1024, 'heads': 16, 'layers': 4, 'seq': 1024,
               'batch': 4} if _on_gpu() else {'vocab': 512, 'd': 64, 'heads': 4, 'layers': 2, 'seq': 32,
               'batch': 2}


def get_model():
    from transformers import GPT2Config, GPT2LMHeadModel
    s = _sizes()
    config = GPT2Config(vocab_size=s["vocab"], n_embd=s["d"], n_layer=s["layers"], n_head=s["heads"],
                        n_positions=s["seq"], use_cache=False, attn_implementation="sdpa")
    return GPT2LMHeadModel(config)


def get_inputs():
    s = _sizes()
    return [torch.randint(0, s["vocab"], (s["batch"], s["seq"]))]


def get_dtype():
    return torch.bfloat16 if _on_gpu() else torch.float32
