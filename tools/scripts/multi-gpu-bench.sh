#!/usr/bin/env bash
# Evaluations per hour with two GPUs against one (docs/benchmarks.md, "Two GPUs"). Runs the same
# training loop at KernelBench's published shapes twice: configs/bench/multi-gpu-1.yaml (one
# Evaluator, on GPU 0) and configs/bench/multi-gpu-2.yaml (`gpus: [0, 1]`: one on each GPU, the
# Oracle balancing them by measured throughput), compiles on the host's cores. For each it reads
# the archive: evaluations, and their rate over the span from the first result to the last
# (start-up left out) and over the whole run; then the ratio of the two rates. Goal: >= 1.9x.
#
# On the GPU machine, in a GPU build (docs/gpu.md):
#   bash tools/scripts/multi-gpu-bench.sh [--drk PATH] [--steps N] [--runs DIR] [--only 1|2]
#     --drk PATH   the drk to run (default: $BUILD_DIR/tools/drk, else build-gpu/tools/drk,
#                  else build/tools/drk)
#     --steps N    training steps of each run (default 2: 128 evaluations)
#     --runs DIR   where the two run directories go (default runs/multi-gpu-bench)
#     --only 1|2   run one side only (one 10-minute device call each; --steps 1 where 2 do not
#                  fit); the ratio is printed once both sides have run into the same --runs DIR
# It refuses, exit code 1, where this machine does not show GPUs 0 and 1 (drk run --dry-run
# says which it shows); exit code 2 for a malformed command line. With $OUT set, the summary
# also goes to $OUT/multi-gpu-bench.txt.
set -uo pipefail
usage() { sed -n '9,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
refuse() { echo "multi-gpu-bench.sh: $1" >&2; usage >&2; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
drk=""
steps=2
runs="runs/multi-gpu-bench"
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --drk) [ $# -ge 2 ] || refuse "--drk needs a path"; drk="$2"; shift 2 ;;
    --steps) [ $# -ge 2 ] || refuse "--steps needs a number"; steps="$2"; shift 2 ;;
    --runs) [ $# -ge 2 ] || refuse "--runs needs a directory"; runs="$2"; shift 2 ;;
    --only) [ $# -ge 2 ] || refuse "--only needs 1 or 2"; only="$2"; shift 2 ;;
    *) refuse "unknown argument '$1'" ;;
  esac
done
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || refuse "--steps must be a positive integer, got '$steps'"
case "$only" in ""|1|2) ;; *) refuse "--only must be 1 or 2, got '$only'" ;; esac
source "$root/tools/scripts/bench-drk.sh"
resolve_drk multi-gpu-bench.sh
command -v python3 > /dev/null || { echo "multi-gpu-bench.sh: python3 is needed to read the archives" >&2; exit 1; }

# Both sides need GPUs 0 and 1 to be comparable: drk resolves multi-gpu-2.yaml as a run would.
if ! check=$("$drk" run --dry-run "$root/configs/bench/multi-gpu-2.yaml" 2>&1); then
  echo "multi-gpu-bench.sh: this benchmark needs 2 GPUs (0 and 1); drk run --dry-run refuses on this machine:" >&2
  printf '%s\n' "$check" | sed 's/^/  /' >&2
  exit 1
fi

mkdir -p "$runs"
summary="$runs/summary.txt"

# Evaluations of a run directory's archive: "COUNT SPAN_S PER_HOUR PER_EVALUATOR".
rate_of() {
  python3 - "$1/archive.sqlite" <<'PY'
import sqlite3, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
count, first, last = db.execute(
    "SELECT COUNT(*), MIN(c.recorded_ms), MAX(c.recorded_ms) FROM results r "
    "JOIN candidates c ON c.id = r.candidate_id").fetchone()
split = ",".join(f"{name}={n}" for name, n in
                 db.execute("SELECT evaluator, COUNT(*) FROM results GROUP BY evaluator ORDER BY evaluator"))
span_s = (last - first) / 1000 if count and count > 1 else 0
per_hour = (count - 1) / span_s * 3600 if span_s > 0 else 0
print(f"{count} {span_s:.1f} {per_hour:.0f} {split or '-'}")
PY
}

run_side() {
  local gpus="$1" dir="$runs/multi-gpu-$1"
  echo "multi-gpu-bench.sh: $gpus GPU(s): drk run configs/bench/multi-gpu-$gpus.yaml ($steps steps) into $dir"
  local start end
  start=$(date +%s.%N)
  if ! "$drk" run "$root/configs/bench/multi-gpu-$gpus.yaml" --fresh --set "run_dir=$dir" \
       --set "experiment.steps=$steps" > "$runs/multi-gpu-$gpus.log" 2>&1; then
    echo "multi-gpu-bench.sh: the $gpus-GPU run failed; its last lines ($runs/multi-gpu-$gpus.log):" >&2
    tail -n 20 "$runs/multi-gpu-$gpus.log" >&2
    exit 1
  fi
  end=$(date +%s.%N)
  read -r count span per_hour split <<< "$(rate_of "$dir")"
  local wall per_hour_wall
  wall=$(python3 -c "print(f'{$end - $start:.1f}')")
  per_hour_wall=$(python3 -c "print(f'{$count / ($end - $start) * 3600:.0f}')")
  echo "$gpus $count $span $per_hour $wall $per_hour_wall $split" > "$runs/multi-gpu-$gpus.rate"
}

[ "$only" = 2 ] || run_side 1
[ "$only" = 1 ] || run_side 2

{
  printf '%-6s %12s %10s %12s %10s %14s  %s\n' gpus evaluations span_s per_hour wall_s per_hour_wall per_evaluator
  for gpus in 1 2; do
    [ -f "$runs/multi-gpu-$gpus.rate" ] || { printf '%-6s %s\n' "$gpus" "not run (--only; run it into --runs $runs)"; continue; }
    read -r g count span per_hour wall per_hour_wall split < "$runs/multi-gpu-$gpus.rate"
    printf '%-6s %12s %10s %12s %10s %14s  %s\n' "$g" "$count" "$span" "$per_hour" "$wall" "$per_hour_wall" "$split"
  done
  if [ -f "$runs/multi-gpu-1.rate" ] && [ -f "$runs/multi-gpu-2.rate" ]; then
    read -r _ _ _ one _ _ _ < "$runs/multi-gpu-1.rate"
    read -r _ _ _ two _ _ _ < "$runs/multi-gpu-2.rate"
    python3 -c "
one, two = $one, $two
ratio = two / one if one > 0 else 0
print(f'two GPUs / one: {ratio:.2f}x evaluations per hour (goal >= 1.9x: {\"met\" if ratio >= 1.9 else \"NOT met\"})')"
  fi
} | tee "$summary"
if [ -n "${OUT:-}" ]; then cp "$summary" "$OUT/multi-gpu-bench.txt"; fi
