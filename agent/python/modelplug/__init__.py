"""Kernels back into the model: plug (standalone), the verify op and its sandboxed model runner, export."""
