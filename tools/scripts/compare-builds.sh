#!/usr/bin/env bash
# Two builds of drkernel side by side on one machine: `drk bench runtime --quick` and
# `drk bench eval --quick` of each, alternated (before, after, before, after, ...) so that both
# see the same machine state, then one table of the medians and the after/before ratios.
#   tools/scripts/compare-builds.sh BEFORE_BUILD AFTER_BUILD [--device cpu|cuda] [--rounds N] [--out DIR]
# A build is a build directory (its drk is BUILD/tools/drk). The JSON of every run stays in
# --out (default a new temporary directory), whose path the table's first line names.
set -euo pipefail
usage() { echo "usage: $0 BEFORE_BUILD AFTER_BUILD [--device cpu|cuda] [--rounds N] [--out DIR]" >&2; exit 2; }
[ $# -ge 2 ] || usage
before="$1" after="$2"; shift 2
device=cpu rounds=2 out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --device) device="${2:?}"; shift 2 ;;
    --rounds) rounds="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    *) usage ;;
  esac
done
for build in "$before" "$after"; do
  if [ ! -x "$build/tools/drk" ]; then
    echo "compare-builds.sh: $build/tools/drk is not built: cmake --build $build --target drk" >&2
    exit 1
  fi
done
out="${out:-$(mktemp -d -t drk-compare.XXXXXX)}"
mkdir -p "$out"

for round in $(seq 1 "$rounds"); do
  for side in before after; do
    build="$before"; [ "$side" = after ] && build="$after"
    echo "round $round/$rounds: $side: drk bench runtime --quick" >&2
    "$build/tools/drk" bench runtime --quick --json > "$out/runtime-$side-$round.json"
    echo "round $round/$rounds: $side: drk bench eval --device $device --quick" >&2
    "$build/tools/drk" bench eval --device "$device" --quick --no-stability --json > "$out/eval-$side-$round.json"
  done
done

python3 - "$out" "$rounds" <<'EOF'
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def load(kind, side):
    return [json.load(open(f"{out}/{kind}-{side}-{r}.json")) for r in range(1, rounds + 1)]
def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None
rows = []
runtime = {side: load("runtime", side) for side in ("before", "after")}
for index, row in enumerate(runtime["before"][0]["rows"]):
    name = f'{row["transport"]} {row["payload_bytes"]} B'
    for metric, path, better in (("msg/s", ("drk", "messages_per_second"), "higher"),
                                 ("p99 us", ("drk", "p99_us"), "lower")):
        values = {side: median([r["rows"][index][path[0]][path[1]] for r in runtime[side]])
                  for side in runtime}
        rows.append((f"runtime {name} {metric}", values["before"], values["after"], better))
for key, better in (("restart_median_ms", "lower"), ("node_failure_detection_median_ms", "lower")):
    rows.append((f"runtime {key}", median([r.get(key) for r in runtime["before"]]),
                 median([r.get(key) for r in runtime["after"]]), better))
evaluation = {side: load("eval", side) for side in ("before", "after")}
for key, better in (("cold_latency_ms", "lower"), ("warm_latency_ms", "lower"),
                    ("idle_warm_latency_ms", "lower"), ("evals_per_hour", "higher")):
    rows.append((f"eval {key}", median([r.get(key) for r in evaluation["before"]]),
                 median([r.get(key) for r in evaluation["after"]]), better))
print(f"side by side, medians of {rounds} alternated runs each (JSON in {out})")
print(f'{"metric":<44} {"before":>12} {"after":>12} {"after/before":>13}  better')
for name, b, a, better in rows:
    ratio = f"{a / b:.3f}" if a is not None and b else "-"
    show = lambda v: "-" if v is None else f"{v:,.1f}"
    print(f"{name:<44} {show(b):>12} {show(a):>12} {ratio:>13}  {better}")
EOF
