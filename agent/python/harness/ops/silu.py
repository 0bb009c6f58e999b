"""silu: x * sigmoid(x)."""

from ..contract.inputs import data
from .gelu import elementwise_spec, from_shapes


def reference(x):
    import torch.nn.functional as F
    return F.silu(x)


def make_inputs(size, dtype, device, gen, dist):
    return (data((size["M"], size["N"]), dtype, device, gen, dist, SPEC),)


SPEC = elementwise_spec("silu", "F.silu(x)", reference, make_inputs, from_shapes, 4, __doc__)
