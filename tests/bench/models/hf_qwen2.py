"""transformers' Qwen2ForCausalLM: Llama-shaped with q/k/v projections that have a bias, GQA (12 query /
2 KV heads), RMSNorm eps 1e-6, NeoX rotary, SwiGLU.
Held-out (#38's targets are checked on models nobody here wrote): built from a config, random weights,
no download; a size that profiles in seconds on a GPU, tiny on a CPU. Needs `transformers`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout import dtype, tokens, sizes  # noqa: E402

GPU = {'vocab': 32000, 'd': 1536, 'heads': 12, 'kv_heads': 2, 'hidden': 8960, 'layers': 4, 'seq': 1024, 'batch': 4}
CPU = {'vocab': 512, 'd': 96, 'heads': 4, 'kv_heads': 2, 'hidden': 192, 'layers': 2, 'seq': 32, 'batch': 2}


def _sizes():
    return sizes(GPU, CPU)


def get_model():
    from transformers import Qwen2Config, Qwen2ForCausalLM
    s = _sizes()
    config = Qwen2Config(vocab_size=s["vocab"], hidden_size=s["d"], intermediate_size=s["hidden"],
                         num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
                         num_key_value_heads=s["kv_heads"], max_position_embeddings=s["seq"], use_cache=False,
                         attn_implementation="sdpa")
    return Qwen2ForCausalLM(config)


def get_inputs():
    return tokens(_sizes())


def get_dtype():
    return dtype()
