"""Constants of the kernel contract and the bench procedure (no torch: describe uses them)."""

CONTRACT_NAMES = ("KERNEL_TYPE", "TEST_SIZES", "TOLERANCES", "TEST_DTYPES", "CONTRACT")
DEFAULT_DTYPES = {"cpu": ["float32"], "cuda": ["bfloat16", "float16", "float32"]}
STAGES = ("smoke", "precision", "sizes", "hostile", "determinism", "odd_sizes", "model_shapes")
ALL_STAGES = ("import",) + STAGES + ("timing", "plausibility")
TOLERANCE_LOOSEN_LIMIT = 10.0

STAGE_TEXT = {
    "import": "read KERNEL_TYPE / TEST_SIZES / TOLERANCES / TEST_DTYPES / CONTRACT statically, bind the "
              "op to its contract attributes (the folder's, sent with the request, else the kernel's CONTRACT; "
              "both must agree), build every input and ground truth, then import the kernel under a unique module name and verify that "
              "torch, the timers and the harness are untouched",
    "smoke": "one small case in the first dtype",
    "precision": "a probe per dtype where fp32 accumulation and a shortcut land apart (long positive sums for "
                 "16-bit accumulators; fp32 inputs with low mantissa bits for TF32/bf16): a shortcut the "
                 "PyTorch reference does not take fails, unless the run allows reduced precision",
    "sizes": "every test size x every dtype, normal and uniform inputs alternating",
    "hostile": "very large, tiny (for norms: ~sqrt(eps), where eps decides the result), mixed-scale rows "
               "and all-equal rows, every dtype (plus one float32 case where an attribute's effect is below "
               "fp16/bf16 resolution: exact vs tanh GELU)",
    "determinism": "two calls on identical inputs must return identical bits",
    "odd_sizes": "fixed odd sizes plus sizes drawn from a secret per-run seed",
    "model_shapes": "the kernel's TEST_SIZES (the model's own shapes), every dtype",
    "timing": "kernel and reference alternated; outputs of randomly chosen timed calls re-checked on "
              "fresh data written into the same input buffers",
    "plausibility": "throughput above the device's physical peak is rejected; > 10x over the "
                    "reference is flagged",
}

ANTI_CHEAT = [
    ("result reuse / caching by input address",
     "fresh random inputs per call; during timing, fresh data is written into the same buffers at "
     "random calls and the output re-checked"),
    ("behaviour that changes after N calls",
     "outputs of randomly chosen timed calls and of the last timed call are re-checked"),
    ("input mutation", "pristine copies compared bit for bit after every call"),
    ("output aliasing an input", "output memory range must not overlap any input"),
    ("returning the same output buffer each call",
     "the previous call's output must be unchanged by the next call"),
    ("work deferred to another thread or stream",
     "output fingerprinted (cloned on the current stream) at return and compared after synchronising "
     "and joining new threads"),
    ("monkeypatching torch / the timers / the harness",
     "golden snapshot of every torch, Tensor, F, time and harness callable before any kernel is "
     "imported; compared after import and after every stage; originals restored"),
    ("global switches (TF32, threads, default dtype)", "compared with the golden values and restored"),
    ("precision downgrade", "ground truth in fp64 (fp32 tests) / fp32; tight fp32 tolerances"),
    ("shape special-casing", "several sizes, odd sizes, secret random sizes, the model's shapes"),
    ("NaN / Inf", "any non-finite output where the truth is finite fails"),
    ("uninitialised memory", "torch.empty* return NaN-poisoned memory during checks and a "
                             "0xFF-filled block is freed into the allocator before each call"),
    ("impossible throughput", "above the physical peak (compute, or DRAM bandwidth with a cold L2)"),
    ("loosened tolerances", "TOLERANCES may tighten freely but loosen at most 10x"),
]
