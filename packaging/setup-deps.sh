#!/usr/bin/env bash
# Installs every build and test dependency of AutoKernel Studio on Debian 12 (bookworm).
# Run as root. Idempotent: with everything present it only checks and exits in seconds.
#
# KSyntaxHighlighting for Qt 6 is not packaged in bookworm, so it is built from Debian
# trixie's source package into a private prefix (see docs/dependencies.md for why).
set -euo pipefail

KSH_VERSION=5.116.0
KSH_DEB_VERSION=5.116.0-1
KSH_SHA256=6f8ccacebd0dc9ce050b2b23b715750c97938b3336fbbb80967920cb8c1dfaa7
KSH_PREFIX=${KSH_PREFIX:-/opt/ksyntaxhighlighting-qt6}

PACKAGES=(
  build-essential cmake ninja-build pkgconf xz-utils perl extra-cmake-modules
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev qt6-tools-dev qt6-tools-dev-tools
  libgl-dev libegl-dev libxkbcommon-dev libgit2-dev nlohmann-json3-dev python3-dev
  librocm-smi-dev xvfb xauth imagemagick fontconfig fonts-dejavu-core
  python3-torch python3-numpy git ca-certificates bubblewrap clang-format flake8
  lintian appstream desktop-file-utils chromium
  openssh-client openssh-server rsync slurm-wlm munge
)

log() { printf '[setup-deps] %s\n' "$*" >&2; }

if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null; then exec sudo -E bash "$0" "$@"; fi
  log "must run as root (it installs Debian packages); try: sudo $0"
  exit 1
fi

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
  log "installing ${#missing[@]} missing packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  log "all Debian packages present"
fi

ksh_config="$KSH_PREFIX/lib/x86_64-linux-gnu/cmake/KF5SyntaxHighlighting/KF5SyntaxHighlightingConfig.cmake"
[[ -f $ksh_config ]] || ksh_config=$(find "$KSH_PREFIX" -name KF5SyntaxHighlightingConfig.cmake 2>/dev/null | head -n1 || true)
if [[ -n ${ksh_config:-} && -f $ksh_config ]]; then
  log "KSyntaxHighlighting (Qt 6) present in $KSH_PREFIX"
  exit 0
fi

# A deb-src-only entry for trixie, with the same archive URI and keyring as the machine's
# own Debian entry. No binary trixie entry is ever added, so nothing from trixie is installed.
src_list=/etc/apt/sources.list.d/autokernel-trixie-src.sources
if [[ ! -f $src_list ]]; then
  uri=$(awk '/^URIs:/ && /debian\/?$/ && !/security/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  keyring=$(awk '/^Signed-By:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  if [[ -z $uri ]]; then
    uri=$(awk '$1=="deb" && $0 !~ /security/ {for (i=2;i<=NF;i++) if ($i ~ /^https?:/) {print $i; exit}}' /etc/apt/sources.list 2>/dev/null || true)
  fi
  uri=${uri:-http://deb.debian.org/debian}
  keyring=${keyring:-/usr/share/keyrings/debian-archive-keyring.gpg}
  log "adding deb-src entry for trixie ($uri)"
  cat >"$src_list" <<SRC
Types: deb-src
URIs: $uri
Suites: trixie
Components: main
Signed-By: $keyring
SRC
  apt-get update -qq
fi

work=$(mktemp -d /tmp/autokernel-ksh.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work" # apt downloads as the _apt user
cd "$work"
log "fetching ksyntax-highlighting $KSH_DEB_VERSION source"
apt-get source -qq --tar-only "ksyntax-highlighting=$KSH_DEB_VERSION"
tarball=ksyntax-highlighting_${KSH_VERSION}.orig.tar.xz
echo "$KSH_SHA256  $tarball" | sha256sum -c --quiet -
tar -xf "$tarball"
srcdir=$(find . -maxdepth 1 -type d -name 'syntax-highlighting-*' -o -maxdepth 1 -type d -name 'ksyntax-highlighting-*' | head -n1)
[[ -n $srcdir ]] || { log "unpacked source folder not found"; exit 1; }
# bookworm ships ECM 5.103; the library builds with it.
sed -i "s/find_package(ECM ${KSH_VERSION}/find_package(ECM 5.103.0/" "$srcdir/CMakeLists.txt"
log "building KSyntaxHighlighting against Qt 6 (about 75 s on 2 cores)"
cmake -S "$srcdir" -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DQT_MAJOR_VERSION=6 \
  -DBUILD_TESTING=OFF -DBUILD_QCH=OFF -DCMAKE_INSTALL_PREFIX="$KSH_PREFIX" >/dev/null
# Build every target: building only the library leaves the install step broken.
cmake --build build >/dev/null
cmake --install build >/dev/null
log "installed KSyntaxHighlighting into $KSH_PREFIX"
