"""Files across benches: leaves files in the sandbox's scratch (its root and the runner's home) for a
later kernel (find_planted.py) to pick up: a channel between candidates. Computes honestly."""
import os

import torch

KERNEL_TYPE = "softmax"
_root = os.environ.get("AK_RUNNER_ROOT") or os.path.dirname(os.getcwd())
for _path in (os.path.join(_root, "ak-planted"), os.path.join(_root, "zygote", "home", "ak-planted"),
              os.path.join(_root, "zygote", "tmp", "ak-planted")):
    try:
        with open(_path, "w") as _f:
            _f.write("left by an earlier kernel\n")
    except OSError:
        pass


def kernel_fn(x):
    return torch.softmax(x, dim=-1)
