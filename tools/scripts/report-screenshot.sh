#!/usr/bin/env bash
# docs/images/report.png: a short quickstart run (3 steps), `drk report` on it, and the page as
# headless Chromium draws it (Debian's chromium package: install-deps.sh --tests). Needs a build
# (tools/scripts/build.sh). Usage: tools/scripts/report-screenshot.sh [OUT.png]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
drk="${BUILD_DIR:-$root/build}/tools/drk"
out="$(realpath -m "${1:-$root/docs/images/report.png}")"
command -v chromium >/dev/null || { echo "report-screenshot: chromium is missing: apt-get install chromium" >&2; exit 1; }
scratch="$(mktemp -d /tmp/drk-report.XXXXXX)"
trap 'rm -rf "$scratch"' EXIT
cd "$root"
"$drk" run configs/quickstart.yaml --fresh --set experiment.steps=3 --set run_dir="$scratch/quickstart"
"$drk" report "$scratch/quickstart" --out "$scratch/report.html"
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$scratch/chromium" \
  --screenshot="$out" --window-size=1400,2400 "file://$scratch/report.html"
echo "report-screenshot: wrote $out"
