#!/usr/bin/env bash
# Compile offload (docs/benchmarks.md, "Compile offload"): the GPU's busy fraction when generation
# and compilation share the GPU node's cores, against the same run with them on a CPU node. Runs
# one training loop twice:
#   local:   configs/bench/offload-local.yaml, every actor on the head, pinned to --gpu-cpus;
#   offload: configs/bench/offload-cpu-node.yaml, the head pinned to --gpu-cpus as before, and the
#            Generators (compile_ahead) on node cpu1, a `drk node` joined over loopback and
#            pinned to --cpu-cpus (two nodes on one machine, their cores split by taskset).
# For each it samples the GPU's utilization (nvidia-smi, every 200 ms) over the run and reads the
# archive: evaluations, their rate from the first result to the last, the median wait for a
# compile, and how many objects were compiled on the Evaluator's node.
#
#   bash tools/scripts/offload-bench.sh [--drk PATH] [--steps N] [--runs DIR] [--only SIDE]
#                                       [--gpu-cpus LIST] [--cpu-cpus LIST] [--set KEY=VALUE ...]
#     --drk PATH        the drk to run (default: $BUILD_DIR/tools/drk, else build-gpu/tools/drk,
#                       else build/tools/drk)
#     --steps N         training steps of each run (default 3)
#     --runs DIR        where the run directories go (default runs/offload-bench)
#     --only SIDE       local or offload: run one side (the table shows both once both have run)
#     --gpu-cpus LIST   the GPU node's cores, taskset's list form (default: the first quarter)
#     --cpu-cpus LIST   the CPU node's cores (default: the rest)
#     --set KEY=VALUE   passed to both runs (e.g. experiment.device=cpu to try it without a GPU)
# Exit code 1 when a run fails (its log's last lines are shown), 2 for a malformed command line.
# With $OUT set, the table also goes to $OUT/offload-bench.txt.
set -uo pipefail
usage() { sed -n '14,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
refuse() { echo "offload-bench.sh: $1" >&2; usage >&2; exit 2; }

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
drk=""
steps=3
runs="runs/offload-bench"
only=""
cores=$(nproc)
gpu_cpus=""
cpu_cpus=""
sets=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --drk) [ $# -ge 2 ] || refuse "--drk needs a path"; drk="$2"; shift 2 ;;
    --steps) [ $# -ge 2 ] || refuse "--steps needs a number"; steps="$2"; shift 2 ;;
    --runs) [ $# -ge 2 ] || refuse "--runs needs a directory"; runs="$2"; shift 2 ;;
    --only) [ $# -ge 2 ] || refuse "--only needs local or offload"; only="$2"; shift 2 ;;
    --gpu-cpus) [ $# -ge 2 ] || refuse "--gpu-cpus needs a list, e.g. 0-3"; gpu_cpus="$2"; shift 2 ;;
    --cpu-cpus) [ $# -ge 2 ] || refuse "--cpu-cpus needs a list, e.g. 4-15"; cpu_cpus="$2"; shift 2 ;;
    --set) [ $# -ge 2 ] || refuse "--set needs KEY=VALUE"; sets+=(--set "$2"); shift 2 ;;
    *) refuse "unknown argument '$1'" ;;
  esac
done
[[ "$steps" =~ ^[1-9][0-9]*$ ]] || refuse "--steps must be a positive integer, got '$steps'"
case "$only" in ""|local|offload) ;; *) refuse "--only must be local or offload, got '$only'" ;; esac
[ "$cores" -ge 2 ] || { echo "offload-bench.sh: needs at least 2 cores to split, this machine has $cores" >&2; exit 1; }
quarter=$(( cores / 4 > 0 ? cores / 4 : 1 ))
[ -n "$gpu_cpus" ] || gpu_cpus="0-$(( quarter - 1 ))"
[ -n "$cpu_cpus" ] || cpu_cpus="$quarter-$(( cores - 1 ))"
command -v taskset > /dev/null || { echo "offload-bench.sh: taskset (util-linux) is needed to split the cores" >&2; exit 1; }
command -v python3 > /dev/null || { echo "offload-bench.sh: python3 is needed to read the archives" >&2; exit 1; }
source "$root/tools/scripts/bench-drk.sh"
resolve_drk offload-bench.sh

mkdir -p "$runs"
runs="$(cd "$runs" && pwd)"
summary="$runs/summary.txt"

# A free loopback port (the kernel's choice), for the head's listen address.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# The GPU's utilization every 200 ms into $1 until killed; nothing where there is no nvidia-smi.
sampler=""
start_sampling() {
  sampler=""
  command -v nvidia-smi > /dev/null || return 0
  nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -i 0 -lms 200 > "$1" 2> /dev/null &
  sampler=$!
}
stop_sampling() { [ -z "$sampler" ] || { kill "$sampler" 2> /dev/null; wait "$sampler" 2> /dev/null; }; }

# "COUNT SPAN_S PER_HOUR COMPILE_WAIT_P50_MS COMPILED_ON_GPU_NODE" from a run directory's archive:
# compiles that the Evaluator ran itself, not served by a shipped object or its cache.
rate_of() {
  python3 - "$1/archive.sqlite" <<'PY'
import sqlite3, statistics, sys
db = sqlite3.connect("file:" + sys.argv[1] + "?mode=ro", uri=True)
count, first, last = db.execute(
    "SELECT COUNT(*), MIN(c.recorded_ms), MAX(c.recorded_ms) FROM results r "
    "JOIN candidates c ON c.id = r.candidate_id").fetchone()
waits = [w for (w,) in db.execute("SELECT compile_wait_ms FROM results WHERE compile_wait_ms IS NOT NULL")]
compiled_here = db.execute("SELECT COUNT(*) FROM results WHERE compiled = 1 AND compile_cached = 0").fetchone()[0]
span_s = (last - first) / 1000 if count and count > 1 else 0
per_hour = (count - 1) / span_s * 3600 if span_s > 0 else 0
print(f"{count} {span_s:.1f} {per_hour:.0f} {statistics.median(waits) if waits else 0:.0f} {compiled_here}")
PY
}

# Mean utilization (%) of a sample file, or "n/a" where none was taken.
busy_of() {
  python3 - "$1" <<'PY'
import sys
try:
    values = [float(line) for line in open(sys.argv[1]) if line.strip().replace(".", "", 1).isdigit()]
except FileNotFoundError:
    values = []
print(f"{sum(values) / len(values):.1f}" if values else "n/a")
PY
}

fail() {
  echo "offload-bench.sh: the $1 run failed; the last lines of $2:" >&2
  tail -n 20 "$2" >&2
  exit 1
}

run_side() {
  local side="$1" dir="$runs/$1" log="$runs/$1.log" start end
  rm -rf "$dir" "$runs/node-cpu1"
  echo "offload-bench.sh: $side: head on cores $gpu_cpus$([ "$side" = offload ] && echo ", node cpu1 on cores $cpu_cpus") ($steps steps) into $dir"
  start_sampling "$runs/$side.gpu"
  start=$(date +%s.%N)
  if [ "$side" = local ]; then
    taskset -c "$gpu_cpus" "$drk" run "$root/configs/bench/offload-local.yaml" --fresh \
      --set "run_dir=$dir" --set "experiment.steps=$steps" "${sets[@]}" > "$log" 2>&1 || { stop_sampling; fail "$side" "$log"; }
  else
    local port node_port head node
    port=$(free_port)
    node_port=$(free_port)
    taskset -c "$gpu_cpus" "$drk" run "$root/configs/bench/offload-cpu-node.yaml" --fresh \
      --set "run_dir=$dir" --set "experiment.steps=$steps" --set "network.listen=tcp://127.0.0.1:$port" \
      "${sets[@]}" > "$log" 2>&1 &
    head=$!
    taskset -c "$cpu_cpus" "$drk" node --join "tcp://127.0.0.1:$port" --name cpu1 --advertise 127.0.0.1 \
      --bind 127.0.0.1 --port "$node_port" --run-dir "$runs/node-cpu1" > "$runs/node-cpu1.log" 2>&1 &
    node=$!
    wait "$head" || { kill "$node" 2> /dev/null; wait "$node" 2> /dev/null; stop_sampling; fail "$side" "$log"; }
    wait "$node" || echo "offload-bench.sh: node cpu1 ended with an error (its log: $runs/node-cpu1.log)" >&2
  fi
  end=$(date +%s.%N)
  stop_sampling
  read -r count span per_hour wait_p50 compiled_here <<< "$(rate_of "$dir")"
  local wall busy
  wall=$(python3 -c "print(f'{$end - $start:.1f}')")
  busy=$(busy_of "$runs/$side.gpu")
  echo "$side $count $span $per_hour $wall $busy $wait_p50 $compiled_here" > "$runs/$side.rate"
}

[ "$only" = offload ] || run_side local
[ "$only" = local ] || run_side offload

{
  echo "GPU node cores: $gpu_cpus; CPU node cores: $cpu_cpus; $steps steps each"
  printf '%-8s %11s %8s %9s %7s %12s %16s %20s\n' side evaluations span_s per_hour wall_s gpu_busy_% compile_wait_p50 compiled_on_gpu_node
  for side in local offload; do
    [ -f "$runs/$side.rate" ] || { printf '%-8s %s\n' "$side" "not run (--only; run it into --runs $runs)"; continue; }
    read -r s count span per_hour wall busy wait_p50 compiled_here < "$runs/$side.rate"
    printf '%-8s %11s %8s %9s %7s %12s %13s ms %20s\n' "$s" "$count" "$span" "$per_hour" "$wall" "$busy" "$wait_p50" "$compiled_here"
  done
  if [ -f "$runs/local.rate" ] && [ -f "$runs/offload.rate" ]; then
    read -r _ _ _ local_rate _ local_busy _ _ < "$runs/local.rate"
    read -r _ _ _ offload_rate _ offload_busy _ _ < "$runs/offload.rate"
    python3 -c "
local_rate, offload_rate = $local_rate, $offload_rate
print(f'offloaded / local: {offload_rate / local_rate if local_rate else 0:.2f}x evaluations per hour; GPU busy $local_busy % -> $offload_busy %')"
  fi
} | tee "$summary"
if [ -n "${OUT:-}" ]; then cp "$summary" "$OUT/offload-bench.txt"; fi
