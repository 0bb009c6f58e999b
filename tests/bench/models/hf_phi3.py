"""transformers' Phi3ForCausalLM: one fused qkv_proj and one fused gate_up_proj Linear (split after the
GEMM), RMSNorm eps 1e-5, NeoX rotary, SiLU-gated MLP.
Held-out (#38's targets are checked on models nobody here wrote): built from a config, random weights,
no download; a size that profiles in seconds on a GPU, tiny on a CPU. Needs `transformers`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout import dtype, tokens, sizes  # noqa: E402

GPU = {'vocab': 32064, 'd': 2048, 'heads': 16, 'kv_heads': 16, 'hidden': 5632, 'layers': 4, 'seq': 1024, 'batch': 4}
CPU = {'vocab': 32064, 'd': 64, 'heads': 4, 'kv_heads': 4, 'hidden': 128, 'layers': 2, 'seq': 32, 'batch': 2}


def _sizes():
    return sizes(GPU, CPU)


def get_model():
    from transformers import Phi3Config, Phi3ForCausalLM
    s = _sizes()
    config = Phi3Config(vocab_size=s["vocab"], hidden_size=s["d"], intermediate_size=s["hidden"],
                        num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
                        num_key_value_heads=s["kv_heads"], max_position_embeddings=s["seq"],
                        original_max_position_embeddings=s["seq"], use_cache=False,
                        attn_implementation="sdpa")
    return Phi3ForCausalLM(config)


def get_inputs():
    return tokens(_sizes())


def get_dtype():
    return dtype()
