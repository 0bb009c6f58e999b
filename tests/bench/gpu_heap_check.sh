#!/usr/bin/env bash
# On the GPU machine: the judge's CUDA heap (docs/harness.md, "On CUDA: the heap") checked and
# measured; everything goes to $OUT. Steps (AK_STEPS, default all, in this order):
#   probe   tests/bench/gpu_heap_probe.py: a child's eager and graph-captured outputs (torch and
#           Triton starters) lie in the heap and read back right through the parent's mapping
#   judge   tests/bench/harness_gpu_judge.py -: every attack (quick), every starter quick, three full
#   noheap  direct_output and late_rounds with AUTOKERNEL_TIMING_HEAP=0 (every side copies, as
#           before the heap): what the attack gained then
#   cost    tests/bench/judge_tune_like.py: the in-process judge of 803822b (.devcarry/old) against
#           this one, full benches of the fast memory-bound kernels (rmsnorm, softmax, layernorm)
# Two device calls: AK_STEPS="probe judge", then AK_STEPS="noheap cost".
set -uo pipefail
out=${OUT:-/tmp/out}; mkdir -p "$out"
steps=${AK_STEPS:-probe judge noheap cost}
export PYTHONUNBUFFERED=1
[[ -x .devcarry/bwrap ]] && export AUTOKERNEL_BWRAP=$PWD/.devcarry/bwrap
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
  echo "bwrap: ${AUTOKERNEL_BWRAP:-none}"; } > "$out/gpu.txt" 2>&1
step() { local name=$1 limit=$2; shift 2; local t0=$SECONDS
  timeout -k 10 "$limit" "$@" > "$out/$name.log" 2>&1; echo "== $name rc=$? wall=$((SECONDS - t0)) s" >> "$out/steps.txt"; }
[[ $steps == *probe* ]] && step probe 100 python3 tests/bench/gpu_heap_probe.py "$out"
[[ $steps == *judge* ]] && step judge "${AK_JUDGE_LIMIT:-400}" python3 tests/bench/harness_gpu_judge.py - "$out"
mkdir -p "$out/noheap"
[[ $steps == *noheap* ]] && AUTOKERNEL_TIMING_HEAP=0 AK_ATTACKS_ONLY=1 ATTACKS=direct_output,late_rounds \
  step noheap 150 python3 tests/bench/harness_gpu_judge.py - "$out/noheap"
[[ $steps == *cost* ]] && TUNE_LIKE_OPS=rmsnorm,softmax,layernorm TUNE_LIKE_MODES=full JUDGE_BUDGET_S=200 \
  step cost 260 python3 tests/bench/judge_tune_like.py .devcarry/old/agent/python "$out" 2
cat "$out/gpu.txt" "$out/steps.txt"
for f in probe judge noheap cost; do [[ -f $out/$f.log ]] && { echo "## $f"; grep -v '^RESULT' "$out/$f.log" | tail -45; }; done
exit 0
