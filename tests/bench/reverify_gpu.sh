#!/usr/bin/env bash
# On the GPU machine: verify an existing (tuned) run again with the bundled CLI, e.g. after the plug or
# verify's selection changed, without tuning again; then export, use the package from a fresh interpreter,
# `reproduce` it, and record the run (its history holds every verification) for the window's examples.
# Usage: tests/bench/reverify_gpu.sh RUN_DIR [VERIFY_ARGS...]   (needs .devcarry/autokernel-cli.tar.xz;
# RUN_DIR is copied to /tmp first, so a carried run stays as it was)
set -uo pipefail
src=$1; shift
out=${OUT:-/tmp/out}; mkdir -p "$out"
name=$(basename "$src"); run=/tmp/re-$name; rm -rf "$run" "/tmp/dist-$name"; cp -r "$src" "$run"
source tests/bench/gpu_env.sh || exit 1
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
model=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['model'])" "$run/run.json")
pkg=ak_$(basename "$model" .py | tr -c 'a-zA-Z0-9_\n' _)   # a Python package name
mfile=$model; [[ $mfile == *.py ]] || mfile=resources/examples/$model.py
t0=$SECONDS; "$cli" verify "$run" "$@" > "$out/$name-reverify.txt" 2>&1; echo "== verify rc=$? $((SECONDS - t0)) s"
grep -vE "^verify \[|triton_mm|AUTOTUNE" "$out/$name-reverify.txt" | cut -c1-240
cp "$run/verification.json" "$out/$name-reverification.json"
"$cli" export "$run" --out "/tmp/dist-$name" --name "$pkg" > /dev/null 2>&1 && \
  python3 tests/bench/export_check.py "/tmp/dist-$name" "$pkg" "$mfile" cuda 2>&1 | tail -1 | cut -c1-300
"$cli" reproduce "/tmp/dist-$name" 2>&1 | tail -4
"$cli" record "$run" --out "$out/$(echo "$gpu" | awk '{print tolower($2)}')-$model-verified.json" \
  --note "The $model example profiled and tuned on an $gpu, then verified in the model (eager + the final set against eager, parity on every output), $(date -u +%F)." \
  && echo "== recorded"
exit 0
