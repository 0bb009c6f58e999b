"""transformers' LlamaForCausalLM built from a config (random weights, no download): the real model
code users bring, with its function-level rotary (apply_rotary_pos_emb / rotate_half) and its own
attention dispatch. On a GPU the size issues #38 and #40 measured (8 layers, d 2048, 16 query / 4 KV
heads, SwiGLU 5632, vocab 32000, batch 4 x 1024; AK_LLAMA_SEQ=2048 gives the bundled llama example's
4 x 2048, which sessions 20-21 used); tiny on a CPU. Needs `transformers`.
"""
import os

import torch


def _on_gpu():
    device = os.environ.get("AUTOKERNEL_DEVICE") or ("cuda" if torch.cuda.is_available() else "cpu")
    return device == "cuda"


def _sizes():
    if _on_gpu():
        seq = int(os.environ.get("AK_LLAMA_SEQ", "1024"))
        return dict(vocab=32000, d=2048, heads=16, kv_heads=4, hidden=5632, layers=8, seq=seq, batch=4)
    return dict(vocab=2048, d=128, heads=4, kv_heads=2, hidden=352, layers=2, seq=64, batch=2)


def get_model():
    from transformers import LlamaConfig, LlamaForCausalLM
    s = _sizes()
    config = LlamaConfig(vocab_size=s["vocab"], hidden_size=s["d"], intermediate_size=s["hidden"],
                         num_hidden_layers=s["layers"], num_attention_heads=s["heads"],
                         num_key_value_heads=s["kv_heads"], max_position_embeddings=s["seq"],
                         rms_norm_eps=1e-6, use_cache=False, attn_implementation="sdpa")
    return LlamaForCausalLM(config)


def get_inputs():
    s = _sizes()
    return [torch.randint(0, s["vocab"], (s["batch"], s["seq"]))]


def get_dtype():
    return torch.bfloat16 if _on_gpu() else torch.float32
