"""Files across benches: says in its import error what it found of what plant_file.py left in the
scratch (a channel between candidates)."""
import os

KERNEL_TYPE = "softmax"
_root = os.environ.get("AK_RUNNER_ROOT") or os.path.dirname(os.getcwd())
_found = [os.path.join(top, f) for top, _, files in os.walk(_root) for f in files if f == "ak-planted"]
raise RuntimeError("find_planted found %r" % _found)


def kernel_fn(x):
    return x
