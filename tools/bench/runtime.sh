#!/usr/bin/env bash
# The runtime benchmark, quick form (about 20 s): drkernel's actors against raw ZeroMQ over
# inproc, ipc, tcp and tcp+CURVE, the restart time after kill -9 (warm spare and cold) and the
# node failure detection time. Prints the table; its last line is the summary against the goals.
#   tools/bench/runtime.sh [BUILD_DIR]     (default: build; tools/scripts/gpu-check.sh passes its own)
# The full run (about 70 s) is `BUILD_DIR/tools/drk bench runtime`; docs/benchmarks.md has one.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="${1:-build}"
case "$build_dir" in
  /*) ;;
  *) [ -d "$build_dir" ] || build_dir="$root/$build_dir" ;;
esac
drk="$build_dir/tools/drk"
if [ ! -x "$drk" ]; then
  echo "runtime.sh: $drk is not built: cmake --build $build_dir --target drk" >&2
  exit 1
fi
exec "$drk" bench runtime --quick
