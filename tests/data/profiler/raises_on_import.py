import torch  # noqa: F401 - a user's model file: it imports torch, then raises

raise RuntimeError("this model file refuses to load")
