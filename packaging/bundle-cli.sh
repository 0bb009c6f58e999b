#!/usr/bin/env bash
# Packs autokernel-cli with the shared libraries it needs (except glibc, which every Linux has) into
# one archive, so the headless twin runs on a GPU server that has no Qt: unpack it anywhere and
#   LD_LIBRARY_PATH=DIR/lib DIR/bin/autokernel-cli ...
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
# glibc's own libraries stay behind: the target's newer glibc runs binaries built against older ones.
ldd "$cli" | awk '/=> \//{print $3}' \
  | grep -Ev '/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*)\.so' \
  | while read -r lib; do cp -L "$lib" "$stage/lib/"; done
mkdir -p "$(dirname "$out")"
tar -C "$stage" -cJf "$out" bin lib
echo "bundle-cli: $(du -h "$out" | cut -f1) -> $out"
