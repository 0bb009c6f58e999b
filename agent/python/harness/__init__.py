"""The fixed benchmark of AutoKernel Studio: references, starters, correctness stages, anti-cheat
and timing. Worker ops: bench -> harness.bench:handle, extract -> harness.extract:handle,
describe -> harness.describe:handle. See docs/harness.md.

Data modules (spec, ops/*, describe) import without torch; everything that runs kernels imports
torch lazily, so `python3 -m harness.describe` works in any interpreter.
"""
