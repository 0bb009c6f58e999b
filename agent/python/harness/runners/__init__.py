"""The processes a kernel runs in and the judge's hold on them. The runner side: runner (the only
code beside a candidate: load, bind, run, place outputs; the zygote), loader (reading kernel files),
integrity (the golden snapshot of torch and the harness), guards (poisoned allocations, a lost CUDA
context), warmup (a spare's first Triton launch). The judge's side: pool (the sandboxed runners, kept
warm: a reference runner and a candidate zygote per device, a fresh candidate per bench) and caller
(calling a kernel in another process and reading its output back as bytes). Stands on contract/,
ops/, ipc/ and isolation/."""
