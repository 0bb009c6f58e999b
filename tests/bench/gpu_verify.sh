#!/usr/bin/env bash
# On the GPU machine: model in, faster model out, with the bundled CLI (packaging/bundle-cli.sh):
# profile MODEL, tune for BUDGET, verify (parity, four timings, the final set), export, and use the
# exported package from a fresh interpreter (tests/bench/export_check.py). Everything goes to $OUT.
# Usage: tests/bench/gpu_verify.sh MODEL BUDGET [KERNELS] [VERIFY_ARGS...]
# MODEL: a bundled example name or a model file (tests/bench/models/hf_llama.py, timm_vit.py).
# AK_STEPS (default "prep check"): "prep" profiles and tunes into /tmp/run-NAME, "check" verifies,
# exports and uses the export. Split across two device calls, the run stays in /tmp of the warm
# machine between them (a call is at most 600 s; tune and verify with compile together do not fit).
set -uo pipefail
model=$1; budget=$2; kernels=${3:-8}; shift 3 || shift $#
out=${OUT:-/tmp/out}; mkdir -p "$out"
name=$(basename "$model" .py)
mfile=$model; [[ $mfile == *.py ]] || mfile=resources/examples/$model.py
source tests/bench/gpu_env.sh || exit 1
steps=${AK_STEPS:-prep check}
run=/tmp/run-$name; rm -rf "/tmp/dist-$name"
log="$out/$name.log"
if [[ $steps == *prep* ]]; then rm -rf "$run"; fi
{ echo "== $name steps $steps budget $budget kernels $kernels $(date -u +%FT%TZ)"; gpu_name; } > "$log" 2>&1
step() { local label=$1; shift; local t0=$SECONDS; "$@" >> "$log" 2>&1; local rc=$?; echo "== $label rc=$rc wall=$((SECONDS-t0)) s" >> "$log"; return $rc; }
if [[ $steps == *prep* ]]; then
  step profile "$cli" profile --model "$model" --out "$run" --device "$device" --top "$kernels" || exit 1
  if [[ $budget != 0 ]]; then step tune "$cli" run "$run" --agent tune --device "$device" --budget "$budget"; fi
fi
# A copy of the tuned run, should the machine be cold by the next call (carry it back to /tmp).
[[ $steps == *check* ]] || { tar -C /tmp -czf "$out/$name-prep.tar.gz" "run-$name"; exit 0; }
step verify "$cli" verify "$run" "$@"
cp "$run/verification.json" "$out/$name-verification.json" 2>/dev/null
"$cli" status "$run" --json > "$out/$name-status.json" 2>&1
step export "$cli" export "$run" --out "/tmp/dist-$name" --name "ak_$name" && \
  step export_check "$py" tests/bench/export_check.py "/tmp/dist-$name" "ak_$name" "$mfile" "$device"
cp "/tmp/dist-$name/README.md" "$out/$name-export-README.md" 2>/dev/null
tar -C /tmp -czf "$out/$name-run.tar.gz" "run-$name" 2>/dev/null
exit 0
