#!/usr/bin/env bash
# The runtime benchmark, quick form (about 12 s): drkernel's actors against raw ZeroMQ over
# inproc, ipc, tcp and tcp+CURVE, the restart time after kill -9 and the node failure detection
# time. Prints the table; its last line is the summary against the goals.
#   tools/bench/runtime.sh [BUILD_DIR]     (default: build; tools/scripts/gpu-check.sh passes its own)
# It runs `drk bench runtime --quick`, or the same measurements through drk-bench-runtime where
# drk is not built. The full run (about 60 s) is `BUILD_DIR/tools/drk bench runtime`;
# docs/benchmarks.md has one.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="${1:-build}"
case "$build_dir" in
  /*) ;;
  *) [ -d "$build_dir" ] || build_dir="$root/$build_dir" ;;
esac
drk="$build_dir/tools/drk"
bench="$build_dir/tools/bench/drk-bench-runtime"
if [ -f "$drk" ] && [ -x "$drk" ]; then
  exec "$drk" bench runtime --quick
fi
if [ -x "$bench" ]; then
  exec "$bench" --quick
fi
echo "runtime.sh: neither $drk nor $bench is built: cmake --build $build_dir --target drk-bench-runtime" >&2
exit 1
