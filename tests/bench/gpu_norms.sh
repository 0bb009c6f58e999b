#!/usr/bin/env bash
# On the GPU machine (issue #15): can a norm starter of another shape reach the bandwidth target?
# 1. tests/bench/starter_sweep.py measures the candidates of tests/bench/starter_candidates/triton
#    (several rows per program; a persistent, software-pipelined walk over the rows) configuration by
#    configuration beside the shipped starter, PyTorch and torch.compile (max-autotune-no-cudagraphs),
#    every output checked first;
# 2. tests/bench/promote_sweep.py writes each op's winner as a starter file when it beats the shipped
#    one by more than 1 % ($OUT/promoted/triton);
# 3. tests/bench/harness_gpu_bench.py runs the promoted files through the full harness (every stage,
#    every dtype, quick and full), the check a starter must pass before it ships.
# Usage: tests/bench/gpu_norms.sh [OPS]   (default rmsnorm,layernorm). Everything goes to $OUT.
set -uo pipefail
ops=${1:-rmsnorm,layernorm}
out=${OUT:-/tmp/out}; mkdir -p "$out"
export PYTHONUNBUFFERED=1
py=${AK_PYTHON:-python3}
t0=$SECONDS
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader > "$out/gpu.txt" 2>&1
OUT=$out "$py" tests/bench/starter_sweep.py --ops "$ops" > "$out/sweep.md" 2> "$out/sweep.err"
echo "== sweep rc=$? $((SECONDS - t0)) s" | tee -a "$out/gpu_norms.log"
"$py" tests/bench/promote_sweep.py --sweep "$out/starter_sweep.json" --ops "$ops" --out "$out/promoted/triton" \
  > "$out/promote.txt" 2>&1
cat "$out/promote.txt" | tee -a "$out/gpu_norms.log"
promoted=$(tail -1 "$out/promote.txt")
if [[ -n $promoted && $promoted != *:* ]]; then
  "$py" tests/bench/harness_gpu_bench.py --parts harness --ops "$promoted" --starters "$out/promoted/triton" \
    --json "$out/harness_promoted.json" > "$out/harness_promoted.md" 2>&1
  echo "== harness on $promoted rc=$? $((SECONDS - t0)) s" | tee -a "$out/gpu_norms.log"
fi
cat "$out/sweep.md"
exit 0
