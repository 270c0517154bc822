#!/usr/bin/env bash
# The main job from nothing: install what is missing, build, and run the quickstart topology
# (the whole training loop on the CPU). Extra arguments go to `drk run`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
"$root/tools/scripts/install-deps.sh"
"$root/tools/scripts/build.sh"
cd "$root"
exec "${BUILD_DIR:-$root/build}/tools/drk" run configs/quickstart.yaml --fresh "$@"
