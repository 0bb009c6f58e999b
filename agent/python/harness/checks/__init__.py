"""Is the kernel right: which inputs each stage uses and their ground truths, drawn before any kernel
code is imported (plan), the tolerance check that names the worst element (compare), the precision
probes for 16-bit accumulation and TF32 (precision), and the correctness stages that call the kernel
through its runner and stop at the first failure (stages). Stands on contract/, ipc/ and runners/."""
