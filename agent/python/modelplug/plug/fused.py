"""A matmul kernel whose contract applies the activation that follows the Linear (its epilogue): the
model's own activation call on exactly that output is then taken out (returns its input as is)."""

import re
import weakref

import torch

class _FusedMarks:
    """Outputs of linears whose kernel already applied the activation that follows them in the model
    (a matmul contract's `activation`): the model's own activation call on exactly such a tensor
    (same object, unchanged since) returns it as it is. Weak references: nothing is kept alive."""

    def __init__(self):
        self.items = {}
        self.missed = []        # kernels whose marked output was freed before an activation took it

    def mark(self, t, k):
        old = self.items.pop(id(t), None)
        if old is not None:
            self.missed.append(old[2])
        try:
            self.items[id(t)] = (weakref.ref(t), t._version, k)
        except TypeError:
            pass

    def take(self, x, family):
        entry = self.items.get(id(x)) if isinstance(x, torch.Tensor) else None
        if entry is None or entry[0]() is not x or entry[1] != x._version:
            return False
        if family and not entry[2].attrs.get("activation", "").startswith(family):
            return False
        del self.items[id(x)]
        return True

    def leftover(self):
        """Kernels whose fused output no activation call took (the model applied it again elsewhere,
        or not at all); forgets them."""
        out = self.missed + [k for _, _, k in self.items.values()]
        self.items, self.missed = {}, []
        return out


ACTIVATION_FAMILY = {"gelu": "gelu", "gelu_tanh": "gelu", "silu": "silu", "relu": "relu"}
_ACTIVATION_FUNCTIONS = {"gelu": ("gelu",), "silu": ("silu",), "relu": ("relu", "relu_")}
_ACTIVATION_CLASS = {"gelu": re.compile(r"(?i)gelu"), "silu": re.compile(r"(?i)silu|swish"),
                     "relu": re.compile(r"(?i)relu")}


class _SkipActivation:
    """A route entry: the activation after a fused linear, taken out of the model for its output."""
    op_type = "_skip_activation"

    def __init__(self, marks, family):
        self.marks, self.family = marks, family


def _skip_activation(k, args, kwargs):
    kwargs.pop("__name", "")
    x = args[0] if args else kwargs.get("input")
    return x if k.marks.take(x, k.family) else None
