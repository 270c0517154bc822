#!/usr/bin/env bash
# The runtime benchmark, quick form (under 10 s): drkernel's actors against raw ZeroMQ, and the
# restart time after kill -9. Prints the table; its last line is the summary against the goals.
#   tools/bench/runtime.sh [BUILD_DIR]     (default: build; tools/scripts/gpu-check.sh passes its own)
# The full run (about 40 s) is `BUILD_DIR/tools/bench/drk-bench-runtime`; docs/benchmarks.md has one.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build_dir="${1:-build}"
case "$build_dir" in
  /*) ;;
  *) [ -d "$build_dir" ] || build_dir="$root/$build_dir" ;;
esac
bench="$build_dir/tools/bench/drk-bench-runtime"
if [ ! -x "$bench" ]; then
  echo "runtime.sh: $bench not found: build it with cmake --build $build_dir --target drk-bench-runtime" >&2
  exit 1
fi
exec "$bench" --quick
