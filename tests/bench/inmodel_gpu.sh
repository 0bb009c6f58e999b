#!/usr/bin/env bash
# On the GPU machine (#38 item 5): what the in-model checks of keeps cost a loop on a GPU, and what they
# find. Profiles a bundled example once with the bundled CLI (packaging/bundle-cli.sh), copies the run,
# and tunes each copy for the same number of experiments with the checks on (--in-model-checks 10,
# the default) and off (0). Prints each wall time, the checks' count and seconds, their share of the
# loop, and each check's verdict; inmodel.json and the logs go to $OUT.
# Usage: tests/bench/inmodel_gpu.sh [MODEL=llama] [EXPERIMENTS=30] [KERNELS=6]
set -uo pipefail
model=${1:-llama}; experiments=${2:-30}; kernels=${3:-6}
out=${OUT:-/tmp/out}; mkdir -p "$out"
AK_FRESH=1 source tests/bench/gpu_env.sh || exit 1
base=/tmp/inmodel-$model
rm -rf "$base" "$base-on" "$base-off"
"$cli" profile --model "$model" --out "$base" --device cuda --top "$kernels" > "$out/$model-profile.txt" 2>&1
grep -h "plug-check" "$out/$model-profile.txt"
for mode in on off; do
  cp -r "$base" "$base-$mode"
  pct=10; [[ $mode == off ]] && pct=0
  start=$(date +%s.%N)
  "$cli" run "$base-$mode" --agent tune --device cuda --experiments "$experiments" --seed 1 \
    --in-model-checks "$pct" > "$out/$model-$mode.txt" 2>&1
  end=$(date +%s.%N)
  echo "$mode: wall $(echo "$end - $start" | bc) s; $(tail -1 "$out/$model-$mode.txt")"
  [[ -f $base-$mode/inmodel.json ]] && cp "$base-$mode/inmodel.json" "$out/$model-inmodel.json"
done
python3 - "$base-on/inmodel.json" "$out/$model-on.txt" <<'PY'
import json, re, sys
try:
    checks = json.load(open(sys.argv[1]))["checks"]
except OSError:
    checks = []
wall = re.search(r"in ([0-9.]+) s,", open(sys.argv[2]).read())
spent = sum(c.get("seconds") or 0 for c in checks)
print("checks: %d, %.1f s%s" % (len(checks), spent,
      ", %.1f %% of the loop's %.1f s" % (100 * spent / float(wall.group(1)), float(wall.group(1))) if wall else ""))
for c in checks:
    print("  %-22s keep #%-4s harness %.2fx  in model %s  noise %s  %s" % (
        c["kernel"], c["experiment"], c.get("harness_speedup") or 0,
        "%+.2f%%" % c["effect_pct"] if c.get("effect_pct") is not None else "-",
        "%.2f%%" % c["limit_pct"] if c.get("limit_pct") is not None else "-", c.get("why") or "positive"))
PY
