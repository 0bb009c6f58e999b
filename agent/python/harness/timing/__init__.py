"""How fast, judged from outside the kernel's process: the timing stage's rounds of candidate,
reference and null-kernel calls on fresh inputs, with output checks between them (rounds), the
arithmetic on their samples that verify shares (stats: medians, paired speedup, noise), the compiled
PyTorch baseline (compiled), and the roofline numbers, physical-peak check and keep rule (roofline).
Stands on everything below it: contract/, ipc/, runners/, checks/."""
