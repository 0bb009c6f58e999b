"""The fixed benchmark of AutoKernel Studio: references, starters, correctness stages, anti-cheat
and timing. Worker ops: bench -> harness.bench:handle, extract -> harness.extract:handle,
describe -> harness.describe:handle, judge_facts -> harness.facts:handle. See docs/harness.md.

The worker ops, the cold re-check (recheck) and the judge's version (judgeid) sit here at the top;
the parts are sub-packages, each importing only those below it (docs/architecture.md, "The judge"):
timing/ > checks/ > runners/ > isolation/, ops/ > ipc/, contract/.

The data modules (contract/, ops/, describe) import without torch; everything that runs kernels
imports torch lazily, so `python3 -m harness.describe` works in any interpreter.
"""
