"""What passes between the judge and a runner process: messages with file descriptors (wire), the
shared arenas inputs and outputs live in (shm for the CPU, cudashm for CUDA, arenaview for both), the
CUDA heap a kernel's timed outputs are placed in (heap), reading a stopped process's memory (procmem)
and a tensor's bytes (bits). Used on both sides; imports nothing else of the harness."""
