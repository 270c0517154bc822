# Sourced by the benchmark scripts (multi-gpu-bench.sh, offload-bench.sh): resolve_drk SCRIPT sets
# $drk to an absolute path: the one given (--drk), else $BUILD_DIR/tools/drk, build-gpu/tools/drk
# or build/tools/drk of the tree at $root; exits 1, naming SCRIPT, when none is there.
resolve_drk() {
  if [ -z "$drk" ]; then
    for candidate in "${BUILD_DIR:-build-gpu}/tools/drk" "$root/build-gpu/tools/drk" "$root/build/tools/drk"; do
      if [ -x "$candidate" ]; then drk="$candidate"; break; fi
    done
  fi
  [ -n "$drk" ] && [ -x "$drk" ] || { echo "$1: no drk found: build it (docs/gpu.md) or pass --drk PATH" >&2; exit 1; }
  drk="$(cd "$(dirname "$drk")" && pwd)/$(basename "$drk")"
}
