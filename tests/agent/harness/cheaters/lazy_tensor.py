"""Attack (answering for itself): returns at once a tensor subclass that computes the softmax only
when the checker first touches it, so the work runs inside the checker, off the clock."""
import torch

KERNEL_TYPE = "softmax"


class _Lazy(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        for a in args:
            if isinstance(a, _Lazy) and getattr(a, "_src", None) is not None:
                with torch._C.DisableTorchFunction():
                    a.copy_(torch.softmax(a._src, dim=-1))
                a._src = None
        plain = [a.as_subclass(torch.Tensor) if isinstance(a, _Lazy) else a for a in args]
        return func(*plain, **kwargs)


def kernel_fn(x):
    out = torch.empty_like(x).as_subclass(_Lazy)
    out._src = x
    return out
