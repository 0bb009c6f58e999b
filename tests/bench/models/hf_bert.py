"""transformers' BertModel: post-norm (residual add + LayerNorm eps 1e-12), exact GELU, Linear with bias,
non-causal SDPA.
Held-out (#38's targets are checked on models nobody here wrote): built from a config, random weights,
no download; a size that profiles in seconds on a GPU, tiny on a CPU. Needs `transformers`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout import dtype, tokens, sizes  # noqa: E402

GPU = {'vocab': 30522, 'd': 768, 'heads': 12, 'layers': 4, 'hidden': 3072, 'seq': 512, 'batch': 16}
CPU = {'vocab': 512, 'd': 64, 'heads': 4, 'layers': 2, 'hidden': 128, 'seq': 32, 'batch': 2}


def _sizes():
    return sizes(GPU, CPU)


def get_model():
    from transformers import BertConfig, BertModel
    s = _sizes()
    config = BertConfig(vocab_size=s["vocab"], hidden_size=s["d"], num_hidden_layers=s["layers"],
                        num_attention_heads=s["heads"], intermediate_size=s["hidden"],
                        max_position_embeddings=s["seq"], attn_implementation="sdpa")
    return BertModel(config)


def get_inputs():
    return tokens(_sizes())


def get_dtype():
    return dtype()
