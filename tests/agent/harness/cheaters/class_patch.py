"""Attack (rewriting the judge): patches a class attribute and module constants the integrity
snapshot does not cover (the timing probe never fires, no check is required), then answers
correctly only while it is watched."""
import sys

import torch

KERNEL_TYPE = "softmax"
_calls = [0]

timed = sys.modules.get("harness.timing.rounds")
if timed is not None:
    timed.PROBE_PROBABILITY = 0.0
    timed.MAX_PROBES = 0
    if hasattr(timed, "Probe"):
        timed.Probe.__call__ = lambda self, i: None
    if hasattr(timed, "verify"):
        timed.verify.__code__ = (lambda *a, **k: None).__code__


def kernel_fn(x):
    _calls[0] += 1
    if torch.is_grad_enabled():            # the correctness stages ran with grad enabled
        return torch.softmax(x, dim=-1)
    return torch.empty_like(x)
