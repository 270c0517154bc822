#!/usr/bin/env bash
# Every test from nothing: install what is missing, build, run the whole suite with CTest.
# GPU tests skip with a message where no GPU is present.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
"$root/tools/scripts/install-deps.sh" --tests
"$root/tools/scripts/build.sh"
cd "${BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 600 -j "$(nproc)"
