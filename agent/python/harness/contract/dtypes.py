"""dtype names: the harness speaks "float32" / "bfloat16" / "float16" everywhere."""

_ALIASES = {
    "float32": "float32", "fp32": "float32", "float": "float32", "f32": "float32",
    "bfloat16": "bfloat16", "bf16": "bfloat16",
    "float16": "float16", "fp16": "float16", "half": "float16", "f16": "float16",
}
SHORT = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def canonical(value):
    """'bf16', 'torch.bfloat16', torch.bfloat16 -> 'bfloat16'. Raises ValueError if unknown."""
    text = str(value).strip().lower()
    if text.startswith("torch."):
        text = text[len("torch."):]
    if text not in _ALIASES:
        raise ValueError("unknown dtype %r (use float32, bfloat16 or float16)" % (value,))
    return _ALIASES[text]


def to_torch(value):
    import torch
    return getattr(torch, canonical(value))


def dtype_name(dtype):
    return canonical(dtype)


def element_size(value):
    return {"float32": 4, "bfloat16": 2, "float16": 2}[canonical(value)]
