"""Attack (answering for itself): returns a torch.Tensor subclass whose arithmetic answers for it:
any subtraction involving it is zero, isfinite is all true, comparisons say "equal". The data is
garbage."""
import torch

KERNEL_TYPE = "softmax"


class _Liar(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        plain = [a.as_subclass(torch.Tensor) if isinstance(a, _Liar) else a for a in args]
        if name in ("sub", "__sub__", "__rsub__"):
            other = plain[1] if isinstance(args[0], _Liar) else plain[0]
            return torch.zeros_like(other if isinstance(other, torch.Tensor) else plain[0])
        if name in ("isfinite",):
            return torch.ones_like(plain[0], dtype=torch.bool)
        if name in ("equal", "allclose"):
            return True
        if name in ("ne", "__ne__"):
            return torch.zeros_like(plain[0], dtype=torch.bool)
        result = func(*plain, **kwargs)
        if isinstance(result, torch.Tensor) and not isinstance(result, _Liar) and name in (
                "to", "reshape", "detach", "clone", "contiguous", "view", "__getitem__", "double", "float"):
            return result.as_subclass(_Liar)
        return result


def kernel_fn(x):
    return torch.zeros_like(x).as_subclass(_Liar)
