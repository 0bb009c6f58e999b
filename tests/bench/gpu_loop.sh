#!/usr/bin/env bash
# On the GPU machine: profile a bundled example with the bundled CLI (packaging/bundle-cli.sh) and run
# the tune agent on it for a fixed budget. Results (profile, live log, summary, status --json, the
# run's log and results.tsv) go to $OUT. Usage: tests/bench/gpu_loop.sh MODEL BUDGET [KERNELS]
set -uo pipefail
model=${1:-gpt2}; budget=${2:-5m}; kernels=${3:-6}; devices=${4:-cuda}
out=${OUT:-/tmp/out}; mkdir -p "$out"
AK_FRESH=1 source tests/bench/gpu_env.sh || exit 1
run=/tmp/run-$model
rm -rf "$run"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > "$out/$model-gpu.txt" 2>&1
/usr/bin/time -f "profile wall %e s" "$cli" profile --model "$model" --out "$run" --device cuda --top "$kernels" \
  > "$out/$model-profile.txt" 2> "$out/$model-profile.err"
/usr/bin/time -f "run wall %e s" "$cli" run "$run" --agent tune --device "$devices" --budget "$budget" \
  > "$out/$model-run.txt" 2> "$out/$model-run.err"
echo "run exit $?" >> "$out/$model-run.txt"
"$cli" status "$run" --json > "$out/$model-status.json" 2>&1
cp "$run/experiments.jsonl" "$run/results.tsv" "$run/run.json" "$out/" 2>/dev/null
for f in experiments.jsonl results.tsv run.json; do [[ -f $out/$f ]] && mv "$out/$f" "$out/$model-$f"; done
tar -C /tmp -czf "$out/$model-run.tar.gz" "run-$model"
