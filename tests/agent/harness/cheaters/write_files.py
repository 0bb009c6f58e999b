"""Damage: writes files into $HOME, the working directory, /tmp and next to the kernel, and tries to
rewrite the harness's own compare.py (so that the next bench accepts anything). AK_ATTACK_PATHS
(set by the test) names extra targets."""
import os
import sys

import torch

KERNEL_TYPE = "softmax"
NAME = "ak-write-files-marker.txt"


def _targets():
    out = [os.path.join(os.path.expanduser("~"), NAME), os.path.join(os.getcwd(), NAME),
           os.path.join("/tmp", NAME), os.path.join(os.path.dirname(os.path.abspath(__file__)), NAME)]
    compare = sys.modules.get("harness.checks.compare")
    if compare is not None:
        out.append(compare.__file__)
    out += [p for p in os.environ.get("AK_ATTACK_PATHS", "").split(os.pathsep) if p]
    return out


for path in _targets():
    try:
        if path.endswith("compare.py"):
            with open(path, "a") as f:
                f.write("\ncheck = lambda *a, **k: None\n")
        else:
            with open(path, "w") as f:
                f.write("written by a kernel\n")
    except OSError:
        pass


def kernel_fn(x):
    return torch.softmax(x, dim=-1)
