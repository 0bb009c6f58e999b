#!/usr/bin/env bash
# On the GPU machine: issue #15's side-by-side table. Profile the held-out model
# (tests/bench/models/heldout_five.py: softmax, RMSNorm, LayerNorm 8192x8192, cross-entropy
# 8192x128256, a 4096^3 linear; bf16) with the bundled CLI (packaging/bundle-cli.sh, carried as
# .devcarry/autokernel-cli.tar.xz), give every kernel the same fixed time with the tune agent (the
# move-on rules: hours-per-kernel only, the other three switched off), then measure each kernel's
# best kept version against its starter, eager and torch.compile in one process
# (tests/bench/tuner_table.py). Everything goes to $OUT.
#
# Usage: tests/bench/tuner_table.sh [SECONDS_PER_KERNEL] [DEADLINE_S]
#   AK_STEPS (default "profile loop measure"): "profile" makes /tmp/run-heldout_five and sets the
#   rules, "loop" runs (or resumes) the tune loop until every kernel is done or DEADLINE_S (default
#   570) seconds after this script started, then packs the run into $OUT/run-heldout_five.tar.gz;
#   "measure" writes the table. A device call is at most 600 s and the loop alone takes about
#   5 x (SECONDS_PER_KERNEL + ~20 s), so two calls: "profile loop", then "loop measure" (the loop
#   resumes from its log; a kernel's time is its experiments' agent + bench seconds, so a resume
#   neither loses nor repeats budget). On a cold machine the second call unpacks the run (and the
#   tune agent's memory) from tests/bench/_gpu_scratch/run-heldout_five.tar.gz, the first call's
#   tarball put back in the working tree. A bubblewrap binary at tests/bench/_gpu_scratch/bwrap or
#   .devcarry/bwrap sandboxes the candidates, as the CLI does where bwrap is installed.
set -uo pipefail
per_kernel=${1:-90}; deadline=${2:-570}
steps=${AK_STEPS:-profile loop measure}
dev=${AK_DEVICE:-cuda}   # cpu only to test this script without a GPU
out=${OUT:-/tmp/out}; mkdir -p "$out"
name=heldout_five; run=/tmp/run-$name; memory=/tmp/ak-tune-memory.json
scratch=tests/bench/_gpu_scratch
log=$out/tuner_table.log
source tests/bench/gpu_env.sh || exit 1
export AUTOKERNEL_TUNE_MEMORY=$memory PYTHONUNBUFFERED=1
[[ -x $scratch/bwrap ]] && export AUTOKERNEL_BWRAP=$PWD/$scratch/bwrap   # an older carry's place
{ echo "== tuner_table steps '$steps' ${per_kernel}s/kernel deadline ${deadline}s $(date -u +%FT%TZ) $("$cli" --version)"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  echo "bwrap: ${AUTOKERNEL_BWRAP:-none carried, the machine bwrap if any}"; } >> "$log" 2>&1
step() { local label=$1; shift; local t0=$SECONDS; "$@" >> "$log" 2>&1; local rc=$?
  echo "== $label rc=$rc wall=$((SECONDS-t0)) s (at ${SECONDS} s)" >> "$log"; return $rc; }

if [[ $steps == *profile* ]]; then
  rm -rf "$run" "$memory"
  step profile "$cli" profile --model tests/bench/models/$name.py --out "$run" --device "$dev" --top 5 || { tail -40 "$log"; exit 1; }
  hours=$(python3 -c "print(round($per_kernel / 3600.0, 6))")
  step rules "$cli" rules "$run" --max-consecutive-reverts 0 --roof-pct 0 --speedup-over-baseline 0 --hours-per-kernel "$hours" || exit 1
elif [[ ! -d $run && -f $scratch/run-$name.tar.gz ]]; then
  tar -C /tmp -xzf "$scratch/run-$name.tar.gz" && echo "== unpacked $scratch/run-$name.tar.gz (cold machine)" >> "$log"
fi
[[ -d $run ]] || { echo "no run directory $run" | tee -a "$log"; exit 1; }

if [[ $steps == *loop* ]]; then
  left=$((deadline - SECONDS))
  if (( left > 40 )); then
    # --budget ends the loop cleanly at an experiment boundary; the timeout (SIGINT: the experiment in
    # flight is recorded as interrupted, resumable) is the backstop for a long last experiment.
    step loop timeout -s INT -k 20 "$left" "$cli" run "$run" --agent tune --device "$dev" --budget "$((left - 25))s"
  else
    echo "== loop skipped: ${left} s left before the deadline" >> "$log"
  fi
  "$cli" status "$run" --json > "$out/status.json" 2>&1
  cp "$run/results.tsv" "$out/results.tsv" 2>/dev/null
  files=("run-$name"); [[ -f $memory ]] && files+=("$(basename "$memory")")
  tar -C /tmp -czf "$out/run-$name.tar.gz" "${files[@]}"
fi

if [[ $steps == *measure* ]]; then
  # AK_MEASURE_LIMIT (s, default none): stop the measurement there; tuner_table.py writes its files
  # after every op, so what was measured comes back. AK_TABLE_ARGS: more tuner_table.py options.
  lim=()
  [[ -n ${AK_MEASURE_LIMIT:-} ]] && lim=(timeout -s INT -k 10 "$AK_MEASURE_LIMIT")
  step measure "${lim[@]}" "${AK_PYTHON:-python3}" tests/bench/tuner_table.py --run "$run" --out "$out" --device "$dev" ${AK_TABLE_ARGS:-}
  "$cli" status "$run" --json > "$out/status.json" 2>&1
  cp "$run/results.tsv" "$out/results.tsv" 2>/dev/null
  [[ -f $out/run-$name.tar.gz ]] || tar -C /tmp -czf "$out/run-$name.tar.gz" "run-$name"
fi
tail -60 "$log"
exit 0
