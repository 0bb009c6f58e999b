#!/usr/bin/env bash
# The Debian package, tested as a user meets it (issue #18, part of the README's test command):
#  1. CPack builds autokernel_*.deb from BUILD_DIR; lintian finds no error in it;
#  2. the build tree is moved away; `apt-get install ./autokernel_*.deb`;
#  3. from /usr/bin, in an empty folder with a fresh HOME: --version, `profile` on a bundled example
#     on the CPU, a short tune run, `autokernel --example gpt2` under Xvfb with a screenshot that is
#     not blank;
#  4. `apt-get purge` leaves none of the package's files behind;
#  5. the server bundle (packaging/bundle-cli.sh), unpacked with the build tree still away: its
#     checksum holds, `doctor` reports what it finds, and a Python without torch is a clear error.
# Usage: packaging/test-deb.sh [BUILD_DIR] [OUT_DIR]   (root, or sudo; OUT_DIR keeps the .deb,
# lintian's report and the screenshot, default BUILD_DIR-deb: outside the build tree, which is
# moved away before the install)
set -euo pipefail
cd "$(dirname "$0")/.."
build=$(realpath "${1:-build/ci}")
out=$(realpath -m "${2:-$build-deb}")
log() { printf '[test-deb] %s (%d s)\n' "$*" "$SECONDS" >&2; }
[[ $out/ == "$build"/* ]] && { log "OUT_DIR $out is inside BUILD_DIR $build, which is moved away before the install"; exit 2; }
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null && exec sudo -E bash "$0" "$@"
  log "must run as root (it installs a package)"; exit 1
fi

mkdir -p "$out"
rm -f "$out"/autokernel_*.deb
log "building the package"
(cd "$build" && cpack -G DEB -B "$out" > "$out/cpack.log" 2>&1) || { cat "$out/cpack.log"; exit 1; }
deb=$(ls "$out"/autokernel_*.deb)
log "$(basename "$deb"): $(du -h "$deb" | cut -f1)"
dpkg-deb -f "$deb" Depends Recommends | sed 's/^/[test-deb]   /' >&2

log "lintian"
# --fail-on error: warnings are reported (kept in OUT_DIR), errors fail the test.
lintian --fail-on error --no-tag-display-limit "$deb" > "$out/lintian.txt" 2>&1 || { cat "$out/lintian.txt"; exit 1; }
log "lintian: $(grep -c '^E:' "$out/lintian.txt" || true) errors, $(grep -c '^W:' "$out/lintian.txt" || true) warnings"

log "the server bundle"
# xz's fastest preset: what is checked is that the bundle unpacks and runs, not its size (the default
# preset took 39 s of CI's 2 cores for the embedded Python's standard library).
XZ_OPT="-T0 -0" packaging/bundle-cli.sh "$build" "$out/autokernel-cli.tar.xz" >&2

# Nothing from the build tree may be needed any more.
away="$build.away-$$"
mv "$build" "$away"
restore() { [[ -d $away ]] && mv "$away" "$build"; }
trap 'restore; apt-get purge -y -qq autokernel > /dev/null 2>&1 || true' EXIT

log "apt-get install"
t0=$SECONDS
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" > "$out/install.log" 2>&1 || { cat "$out/install.log"; exit 1; }
log "installed in $((SECONDS - t0)) s"
dpkg -L autokernel > "$out/files.txt"

work=$(mktemp -d)
export HOME=$work/home XDG_CACHE_HOME=$work/home/.cache XDG_CONFIG_HOME=$work/home/.config
unset AUTOKERNEL_SOURCE_DIR AUTOKERNEL_CLI || true
mkdir -p "$HOME"
cd "$work"
[[ $(command -v autokernel-cli) == /usr/bin/autokernel-cli ]] || { log "autokernel-cli not on PATH"; exit 1; }
autokernel-cli --version
# ldd's whole output first: `ldd | grep -q` under pipefail fails now and then, when grep's early exit
# hands ldd a SIGPIPE (it did once on 2026-12-07 with the library in place).
libs=$(ldd /usr/bin/autokernel)
grep -Eq 'SyntaxHighlighting.* => /usr/(bin/\.\./)?lib/autokernel/' <<< "$libs" \
  || { printf '%s\n' "$libs" >&2; log "the window does not find its KSyntaxHighlighting in /usr/lib/autokernel"; exit 1; }
if ldd /usr/bin/autokernel /usr/bin/autokernel-cli | grep -E 'not found|/opt/'; then log "a library is missing or outside the package"; exit 1; fi
man -w autokernel-cli > /dev/null && man -w autokernel > /dev/null
desktop-file-validate /usr/share/applications/io.autokernel.Studio.desktop
appstreamcli validate --no-net --explain /usr/share/metainfo/io.autokernel.Studio.metainfo.xml > "$out/appstream.txt" \
  || { cat "$out/appstream.txt"; exit 1; }

log "profile a bundled example on the CPU"
autokernel-cli profile --model gpt2 --out run --device cpu --top 2 --python /usr/bin/python3 > "$out/profile.txt" 2>&1 \
  || { cat "$out/profile.txt"; exit 1; }
log "a short tune run"
autokernel-cli run run --agent tune --device cpu --quick --experiments 3 --python /usr/bin/python3 > "$out/run.txt" 2>&1 \
  || { cat "$out/run.txt"; exit 1; }
autokernel-cli status run > "$out/status.txt"   # whole, then shown: `| head` under pipefail can SIGPIPE
head -5 "$out/status.txt"
grep -q '"status"' run/experiments.jsonl || { log "the run recorded no experiment"; exit 1; }

log "the window under Xvfb"
rm -f "$out/screenshot.png"
xvfb-run -a -s "-screen 0 1600x1000x24" bash -c '
  QT_QPA_PLATFORM=xcb autokernel --example gpt2 > "$1/window.log" 2>&1 & app=$!
  for i in $(seq 1 60); do
    sleep 2
    kill -0 $app 2>/dev/null || { echo "the window exited" >&2; exit 1; }
    import -window root "$1/screenshot.png" 2>/dev/null || continue
    # Not blank: a window with text and a table has hundreds of colours; an empty screen has one.
    colours=$(convert "$1/screenshot.png" -format %k info:)
    (( colours > 100 )) && [[ $i -ge 10 ]] && break
  done
  kill $app; wait $app 2>/dev/null || true
  echo "$colours colours" >&2
  (( colours > 100 ))' _ "$out" || { cat "$out/window.log"; exit 1; }
log "screenshot: $out/screenshot.png"

log "apt-get purge"
cd /
DEBIAN_FRONTEND=noninteractive apt-get purge -y -qq autokernel > "$out/purge.log" 2>&1 || { cat "$out/purge.log"; exit 1; }
left=$(while read -r f; do if [[ -f $f || -L $f ]]; then echo "$f"; fi; done < "$out/files.txt"
  if [[ -d /usr/lib/autokernel ]]; then echo /usr/lib/autokernel; fi)
[[ -z $left ]] || { log "left behind after purge:"; echo "$left"; exit 1; }
log "the server bundle, unpacked"
(cd "$out" && sha256sum -c --quiet autokernel-cli.tar.xz.sha256)
ak=$work/bundle
mkdir -p "$ak"
tar -C "$ak" -xJf "$out/autokernel-cli.tar.xz"
bundled() { LD_LIBRARY_PATH=$ak/lib AUTOKERNEL_EMBEDDED_PYTHONHOME=$ak/python "$ak/bin/autokernel-cli" "$@"; }
grep -q "autokernel-cli" "$ak/VERSION"
bundled doctor --python /usr/bin/python3 > "$out/doctor.txt" 2>&1 || { cat "$out/doctor.txt"; exit 1; }
grep -q "ok       embedded Python: Python 3" "$out/doctor.txt" && grep -q "ok       Python with torch" "$out/doctor.txt" \
  || { cat "$out/doctor.txt"; log "doctor in the bundle did not find the embedded Python or torch"; exit 1; }
printf '#!/bin/sh\nexec /usr/bin/python3 -S "$@"\n' > "$work/python-without-torch"
chmod +x "$work/python-without-torch"
if bundled doctor --python "$work/python-without-torch" > "$out/doctor-no-torch.txt" 2>&1; then
  cat "$out/doctor-no-torch.txt"; log "doctor passed with a Python that has no torch"; exit 1
fi
grep -q "error    Python with torch: none found" "$out/doctor-no-torch.txt" \
  || { cat "$out/doctor-no-torch.txt"; log "doctor's missing-torch error is not clear"; exit 1; }
log "bundle: $(cat "$ak/VERSION"); doctor ok, and a missing torch named"
rm -rf "$work"
log "package test passed"
