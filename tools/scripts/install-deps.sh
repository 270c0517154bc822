#!/usr/bin/env bash
# Installs the Debian 12 packages drkernel builds against, only those that are missing.
# apt-get only; needs root (or sudo). The CUDA toolkit is optional and never installed here:
# where /usr/local/cuda exists, the build uses it. --tests adds what only the tests use.
set -euo pipefail
with_tests=false
case "${1:-}" in
  "") ;;
  --tests) with_tests=true ;;
  *) echo "install-deps: unknown option '$1' (the only one is --tests)" >&2; exit 2 ;;
esac
packages=(
  build-essential cmake ninja-build pkg-config
  libzmq3-dev cppzmq-dev capnproto libcapnp-dev libyaml-cpp-dev doctest-dev
  libsqlite3-dev libboost-dev libtorch-dev
  libcli11-dev          # every command line (runtime/command_line.h)
  nlohmann-json3-dev    # every JSON drkernel reads or writes (base/json_text.h)
  libsodium-dev         # SHA-256 of the compile cache (kernels/compile/content_hash.h)
  libspdlog-dev         # the one logger (runtime/log.h); brings libfmt-dev
  libseccomp-dev        # the sandbox's syscall filter
  libssl-dev            # https of the language-model Generators (runtime/http_client/)
  python3-torch         # describes KernelBench problem files (drk kernelbench import), same LibTorch
  pybind11-dev          # torch/extension.h includes it: load_inline candidates build against it
  libpython3-dev        # the embedded CPython of KernelBench references and Python candidates
  libopenblas0-openmp   # LibTorch's BLAS: the honest CPU baseline (netlib's reference BLAS otherwise)
  clang libclang-rt-14-dev  # libFuzzer, ASan and UBSan for tests/fuzz (decode_fuzz_smoke)
)
if $with_tests; then
  packages+=(
    chromium              # loads the dashboard and the report headless (tests/observe)
    prometheus            # promtool, which checks /metrics's text format
    python3-jsonschema    # checks drk trace's output against the trace event schema
    slurm-wlm munge       # slurmctld, slurmd, sbatch and munged: a Slurm job of a run (tests/integration/slurm_test)
  )
fi
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'install ok installed' \
    || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run as root or install sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
