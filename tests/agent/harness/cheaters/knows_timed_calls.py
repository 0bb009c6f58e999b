"""Attack (bending the clock): tells timed calls from checked ones (grad mode off, same buffer and
same first elements as the previous call) and returns the previous output for them."""
import torch

KERNEL_TYPE = "softmax"
_last = {}


def kernel_fn(x):
    key = (x.data_ptr(), tuple(x.shape))
    head = x.reshape(-1)[:2].tolist()
    prev = _last.get(key)
    if not torch.is_grad_enabled() and prev is not None and prev[0] == head:
        return prev[1].clone()
    out = torch.softmax(x, dim=-1)
    _last[key] = (head, out)
    return out
