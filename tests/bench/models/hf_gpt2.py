"""transformers' GPT2LMHeadModel: Conv1D projections (addmm with bias, weight [in, out]), tanh GELU
(gelu_new), LayerNorm eps 1e-5, causal SDPA.
Held-out (#38's targets are checked on models nobody here wrote): built from a config, random weights,
no download; a size that profiles in seconds on a GPU, tiny on a CPU. Needs `transformers`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout import dtype, tokens, sizes  # noqa: E402

GPU = {'vocab': 50257, 'd': 1024, 'heads': 16, 'layers': 4, 'seq': 1024, 'batch': 4}
CPU = {'vocab': 512, 'd': 64, 'heads': 4, 'layers': 2, 'seq': 32, 'batch': 2}


def _sizes():
    return sizes(GPU, CPU)


def get_model():
    from transformers import GPT2Config, GPT2LMHeadModel
    s = _sizes()
    config = GPT2Config(vocab_size=s["vocab"], n_embd=s["d"], n_layer=s["layers"], n_head=s["heads"],
                        n_positions=s["seq"], use_cache=False, attn_implementation="sdpa")
    return GPT2LMHeadModel(config)


def get_inputs():
    return tokens(_sizes())


def get_dtype():
    return dtype()
