#!/usr/bin/env bash
# On the GPU machine (#38's first target, on models nobody here wrote): profile each held-out model with
# the bundled CLI (the profile runs the plug-check: every folder's starter plugged into the model, every
# site routed with parity, or the folder marked with its reason before any budget), and tabulate each
# folder's contract and state. A folder counts as "plugs or is marked" when its state is waiting
# (plug-checked) or unpluggable / refused with a reason; anything else (no reason) is a miss.
# Usage: tests/bench/heldout_plug_gpu.sh [MODELS...]   (default: tests/bench/models/{hf,timm}_* but the two
# measured ones); AK_DEVICE=cpu dry-runs it here. Summary: $OUT/heldout_plug.md.
set -uo pipefail
models=${*:-$(ls tests/bench/models/hf_*.py tests/bench/models/timm_*.py | grep -v -e hf_llama -e timm_vit)}
out=${OUT:-/tmp/out}; mkdir -p "$out"
source tests/bench/gpu_env.sh || exit 1
summary=$out/heldout_plug.md
{ echo "# heldout_plug $(date -u +%FT%TZ)"; gpu_name; } > "$summary"
for m in $models; do
  name=$(basename "$m" .py); run=/tmp/heldout-$name; rm -rf "$run"
  t0=$SECONDS
  timeout ${AK_PROFILE_LIMIT:-240} "$cli" profile --model "$m" --out "$run" --device "$device" --top 10 \
    > "$out/$name-profile.log" 2>&1
  rc=$?
  "$cli" status "$run" --json > "$out/$name-status.json" 2>/dev/null
  "$py" - "$name" "$out/$name-status.json" "$rc" "$((SECONDS - t0))" >> "$summary" 2>&1 <<'PY'
import json, sys
name, st, rc, wall = sys.argv[1:5]
print("\n## %s (profile exit %s, %s s)\n" % (name, rc, wall))
try:
    s = json.load(open(st))
except Exception as e:
    print("no status: %s" % e)
    sys.exit(0)
print("| folder | op | call | attrs | state | reason |\n|---|---|---|---|---|---|")
good = 0
ks = s.get("kernels", [])
for k in ks:
    c = k.get("contract", {}) or {}
    why = c.get("refused") or ""
    ok = k["state"] in ("waiting", "active", "done") or (k["state"] == "unpluggable" and why)
    good += bool(ok)
    print("| %s | %s | %s | %s | %s | %s |" % (k["folder"].split("/")[-1], k["op_type"], c.get("callable", ""),
          json.dumps(c.get("attrs", {})), k["state"], why[:200].replace("|", "/")))
print("\n%s: %d of %d folders plug at every site or are marked with their reason" % (name, good, len(ks)))
PY
  tail -n 3 "$out/$name-profile.log" | sed 's/^/    /' >> "$summary"
done
cat "$summary"
