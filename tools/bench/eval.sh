#!/usr/bin/env bash
# The evaluation benchmark, quick form: the real evaluation engine over one task per family the
# policy renders, with honest candidates: latency with a cold and a warm compile cache (per
# phase) and evaluations per hour compiled inline against the compile pool. On a machine with a
# GPU (nvidia-smi sees one) it evaluates CUDA candidates (evaluations per GPU-hour), otherwise
# C++ ones. Prints the table; its last line is the summary.
#   tools/bench/eval.sh [BUILD_DIR]     (default: build; tools/scripts/gpu-check.sh passes its own)
# The full run is `BUILD_DIR/tools/drk bench eval [--device cuda]`; docs/benchmarks.md has one.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="${1:-build}"
case "$build_dir" in
  /*) ;;
  *) [ -d "$build_dir" ] || build_dir="$root/$build_dir" ;;
esac
drk="$build_dir/tools/drk"
if ! [ -x "$drk" ]; then
  echo "eval.sh: $drk is not built: cmake --build $build_dir --target drk" >&2
  exit 1
fi
device=cpu
if command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L 2> /dev/null | grep -q '^GPU'; then
  device=cuda
fi
exec "$drk" bench eval --quick --device "$device"
