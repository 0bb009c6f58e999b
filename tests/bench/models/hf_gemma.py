"""transformers' GemmaForCausalLM: RMSNorm as x_hat * (1 + w) (eps 1e-6), head dim 256, one KV head,
GeGLU MLP with tanh GELU (no fused_mlp region: SiLU only), embeddings scaled by sqrt(d).
Held-out (#38's targets are checked on models nobody here wrote): built from a config, random weights,
no download; a size that profiles in seconds on a GPU, tiny on a CPU. Needs `transformers`.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from heldout import dtype, tokens, sizes  # noqa: E402

GPU = {'vocab': 32000, 'd': 2048, 'heads': 8, 'kv_heads': 1, 'head_dim': 256, 'hidden': 8192, 'layers': 4,
       'seq': 1024, 'batch': 4}
CPU = {'vocab': 512, 'd': 64, 'heads': 4, 'kv_heads': 1, 'head_dim': 16, 'hidden': 128, 'layers': 2, 'seq': 32,
       'batch': 2}


def _sizes():
    return sizes(GPU, CPU)


def get_model():
    from transformers import GemmaConfig, GemmaForCausalLM
    s = _sizes()
    config = GemmaConfig(vocab_size=s["vocab"], hidden_size=s["d"], intermediate_size=s["hidden"],
                         num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
                         num_key_value_heads=s["kv_heads"], head_dim=s["head_dim"],
                         max_position_embeddings=s["seq"], hidden_activation="gelu_pytorch_tanh",
                         use_cache=False, attn_implementation="sdpa")
    return GemmaForCausalLM(config)


def get_inputs():
    return tokens(_sizes())


def get_dtype():
    return dtype()
