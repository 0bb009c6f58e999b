"""What a kernel is held to, before anything runs: the contract's rules (names a kernel file defines,
default dtypes, the stages and the anti-cheat checks), the dtype names, OpSpec (one op type's
reference, inputs, sizes and formulas) and the random inputs. The bottom of the judge: imports nothing
of the harness, and no torch at import (describe reads it in any interpreter)."""
