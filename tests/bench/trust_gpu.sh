#!/usr/bin/env bash
# On the GPU machine (#43, #41): the numbers a sceptic asks for, on one device, in two calls of the
# device tool (a call is at most 600 s; the run waits in /tmp of the warm machine between them).
#   STEP=1: numbers_gpu.py (measured roofs, % of roof against measured and spec, eager and compiled
#           PyTorch per starter, the judge's hash and isolation), then profile the llama example and
#           tune it for BUDGET (tests/bench/gpu_verify.sh's "prep").
#   STEP=2: verify (parity, the cold re-check of every offered kernel, eager and compile timings),
#           export and use the package from a fresh interpreter, `autokernel-cli reproduce` on the
#           export here, and the run as a recording (`record`) for the window's examples.
# Usage: STEP=1|2 tests/bench/trust_gpu.sh [MODEL=llama] [BUDGET=4m]   (needs .devcarry/autokernel-cli.tar.xz)
set -uo pipefail
model=${1:-llama}; budget=${2:-4m}
out=${OUT:-/tmp/out}; mkdir -p "$out"
name=$(basename "$model" .py)
source tests/bench/gpu_env.sh || exit 1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
case ${STEP:-1} in
1)
  timeout 200 python3 tests/bench/numbers_gpu.py > "$out/numbers_gpu.json" 2> "$out/numbers_gpu.err"
  tail -5 "$out/numbers_gpu.err"
  AK_STEPS=prep bash tests/bench/gpu_verify.sh "$model" "$budget" 8
  tail -3 "$out/$name.log"
  ;;
2)
  AK_STEPS=check bash tests/bench/gpu_verify.sh "$model" "$budget" 8 --seeds 1 --rounds 5
  grep "^==" "$out/$name.log"
  t0=$SECONDS
  "$cli" reproduce "/tmp/dist-$name" > "$out/$name-reproduce.txt" 2>&1
  echo "== reproduce rc=$? wall=$((SECONDS - t0)) s"
  "$cli" reproduce "/tmp/dist-$name" --json > "$out/$name-reproduce.json" 2>/dev/null
  cat "$out/$name-reproduce.txt"
  "$cli" record "/tmp/run-$name" --out "$out/$(echo "$gpu" | awk '{print tolower($2)}')-$name-verified.json" \
    --note "The $name example profiled, tuned for $budget and verified in the model on an $gpu ($(date -u +%F))." \
    && echo "== recorded"
  ;;
esac
exit 0
