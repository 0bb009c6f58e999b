# Sourced (not run) by the GPU machine's scripts in tests/bench/: the CLI bundle that
# packaging/bundle-cli.sh made, carried in .devcarry/, unpacked once per machine into $ak (a warm
# machine keeps it between device calls), its environment, and Debian's bubblewrap when one is carried
# (the GPU machine has none of its own). Sets ak, cli and device (AK_DEVICE, default cuda: AK_DEVICE=cpu
# dry-runs a script on a machine without a GPU, AUTOKERNEL_PYTHON naming an interpreter with torch).
# AK_FRESH=1 unpacks again even where a bundle is there (a script that must run the bundle it carries).
ak=${AK_DIR:-/tmp/ak}
if [[ ${AK_FRESH:-0} == 1 || ! -x $ak/bin/autokernel-cli ]]; then
  rm -rf "$ak"; mkdir -p "$ak"
  tar -C "$ak" -xJf .devcarry/autokernel-cli.tar.xz || { echo "gpu_env: no bundle in .devcarry/ (packaging/bundle-cli.sh)" >&2; return 1; }
fi
export LD_LIBRARY_PATH=$ak/lib AUTOKERNEL_EMBEDDED_PYTHONHOME=$ak/python
[[ -x .devcarry/bwrap ]] && export AUTOKERNEL_BWRAP=$PWD/.devcarry/bwrap
cli=$ak/bin/autokernel-cli
device=${AK_DEVICE:-cuda}
py=${AUTOKERNEL_PYTHON:-python3}     # the interpreter with torch, for the scripts' own Python
# The card every number is measured on ("cpu" where there is none).
gpu_name() { nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo "cpu (no nvidia-smi)"; }
