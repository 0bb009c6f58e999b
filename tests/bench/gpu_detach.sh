#!/usr/bin/env bash
# A step longer than one device call (at most 600 s), a 10-minute tune say: started once in a process
# session of its own (setsid), which the device tool lets outlive the call while the machine stays warm
# (it is given back after 30 s idle, so the next call must follow at once); each call with the same NAME,
# the first included, then waits up to WAIT seconds for it and prints the end of its output.
# Exit status: the step's own once it has finished, 3 while it still runs.
# Usage: [WAIT=570] tests/bench/gpu_detach.sh NAME COMMAND [ARGS...]
#   e.g. AK_STEPS=prep tests/bench/gpu_detach.sh llama bash tests/bench/gpu_verify.sh hf_llama.py 10m
set -u
name=$1; shift
base=/tmp/detach-$name
if [[ ! -e $base.started ]]; then
  date -u +%FT%TZ > "$base.started"
  # bash -c gets the command as its arguments ("$@"): nothing in them is parsed twice.
  setsid bash -c '"$@"; echo $? > "'"$base"'.rc.tmp"; mv "'"$base"'.rc.tmp" "'"$base"'.rc"' detached "$@" \
    > "$base.out" 2>&1 < /dev/null &
fi
t0=$SECONDS
while [[ ! -e $base.rc && $((SECONDS - t0)) -lt ${WAIT:-570} ]]; do sleep 2; done
tail -n 20 "$base.out"
if [[ -e $base.rc ]]; then
  echo "detach $name: finished, exit $(cat "$base.rc") (started $(cat "$base.started"))"
  exit "$(cat "$base.rc")"
fi
echo "detach $name: still running (started $(cat "$base.started"))"
exit 3
