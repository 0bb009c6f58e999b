#!/usr/bin/env bash
# Packs autokernel-cli with the shared libraries it needs (except glibc, which every Linux has) into
# one archive, so the headless twin runs on a GPU server that has no Qt: unpack it anywhere and
#   LD_LIBRARY_PATH=DIR/lib AUTOKERNEL_EMBEDDED_PYTHONHOME=DIR/python DIR/bin/autokernel-cli ...
# The embedded interpreter (static checks of kernel.py) needs its own standard library, which travels
# in DIR/python; torch work still runs in the target's own python3.
# rsync travels too (DIR/bin/rsync, a wrapper that runs DIR/libexec/rsync with DIR/lib): a window that
# follows a run on the server (docs/remote.md) uses it when the server has no rsync of its own, so
# the server needs nothing installed. RSYNC=/path/to/rsync picks another one; RSYNC= leaves it out.
# Usage: packaging/bundle-cli.sh [BUILD_DIR] [OUT_ARCHIVE]
set -euo pipefail
build=${1:-build/release}
out=${2:-.devcarry/autokernel-cli.tar.xz}
cli="$build/app/autokernel-cli"
[[ -x $cli ]] || { echo "bundle-cli: $cli not built (cmake --workflow --preset release)" >&2; exit 2; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp "$cli" "$stage/bin/"
strip --strip-debug "$stage/bin/autokernel-cli"
# glibc's own libraries stay behind: the target's newer glibc runs binaries built against older ones.
copy_libs() {
  ldd "$1" | awk '/=> \//{print $3}' \
    | grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' \
    | while read -r lib; do cp -L "$lib" "$stage/lib/"; done
}
copy_libs "$cli"
rsync_bin=${RSYNC-/usr/bin/rsync}
if [[ -n $rsync_bin && -x $rsync_bin ]]; then
  mkdir -p "$stage/libexec"
  cp "$rsync_bin" "$stage/libexec/rsync"
  copy_libs "$rsync_bin"
  # The mirror runs it by its path (beside autokernel-cli), so it finds its libraries from its own
  # place, through a symlink too, without the user's LD_LIBRARY_PATH.
  cat > "$stage/bin/rsync" <<'SH'
#!/bin/sh
# rsync of the autokernel-cli bundle, with the libraries it was built with (../lib). The shell's own
# words only (readlink if there is one, for a symlink to this file): the server's PATH may be bare.
self=$0
target=$(readlink -f "$0" 2>/dev/null) && [ -n "$target" ] && self=$target
here=${self%/*}/..
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/libexec/rsync" "$@"
SH
  chmod 755 "$stage/bin/rsync"
elif [[ -n $rsync_bin ]]; then
  echo "bundle-cli: no rsync at $rsync_bin (apt install rsync): the bundle has none, so a server" \
       "followed by a window needs its own" >&2
fi
# From ldd's whole output: a reader that stops early (| head, grep -m1) can SIGPIPE ldd under pipefail.
pyver=$(awk 'match($0, /libpython3\.[0-9]+/) { print substr($0, RSTART + 9, RLENGTH - 9); exit }' <<< "$(ldd "$cli")")
if [[ -n $pyver ]]; then
  mkdir -p "$stage/python/lib"
  tar -C /usr/lib --exclude="python$pyver/test" --exclude="python$pyver/dist-packages" \
      --exclude="python$pyver/site-packages" --exclude='__pycache__' --exclude="python$pyver/idlelib" \
      --exclude="python$pyver/tkinter" --exclude="python$pyver/lib2to3" -cf - "python$pyver" \
    | tar -C "$stage/python/lib" -xf -
fi
# What is inside, for the user on the server: the version and revision, and how to check the machine.
"$cli" --version > "$stage/VERSION"
cat > "$stage/README" <<'TXT'
autokernel-cli for a server without Qt. First check the machine:
  LD_LIBRARY_PATH=$PWD/lib AUTOKERNEL_EMBEDDED_PYTHONHOME=$PWD/python bin/autokernel-cli doctor
then profile and run as in the project's README (autokernel-cli --help lists the commands).
bin/rsync is for a window that follows a run here over ssh (name this bin/autokernel-cli in its
Open Remote Run dialog): it is used when this machine has no rsync of its own.
TXT
mkdir -p "$(dirname "$out")"
XZ_OPT=${XZ_OPT:--T0} tar -C "$stage" -cJf "$out" VERSION README bin lib \
  $( [[ -d $stage/libexec ]] && echo libexec ) $( [[ -d $stage/python ]] && echo python )
# A checksum beside the archive: `sha256sum -c` on the server proves the copy whole.
(cd "$(dirname "$out")" && sha256sum "$(basename "$out")" > "$(basename "$out").sha256")
echo "bundle-cli: $(cat "$stage/VERSION"), $(du -h "$out" | cut -f1) -> $out (+ .sha256)"
