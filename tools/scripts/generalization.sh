#!/usr/bin/env bash
# The held-out generalisation experiment of docs/experiments.md §7, on the CPU: train the embedded
# policy on (a) ported tasks, (b) generated tasks, (c) both, for the same number of candidates;
# then evaluate each policy, and an untrained one, without learning (learning_rate 0) on ported
# tasks that none of them trained on. Each evaluation run's summary gives Fast@1.0, Fast@1.2 and
# the geometric mean of the best speedups over the held-out tasks.
#   tools/scripts/generalization.sh [OUT_DIR] [STEPS] [SEED]
#   (default runs/generalization, 8 steps, seed 1: the policy's initialisation and sampling, and
#   the generated tasks' draw)
set -euo pipefail
cd "$(dirname "$0")/../.."
drk=build/tools/drk
out=${1:-runs/generalization}
steps=${2:-8}
seed=${3:-1}
held_out=gelu,swish,hardtanh,log_softmax,rms_norm,gemm_relu_divide,matmul_subtract_multiply_relu,mean_reduction
ported=relu,sigmoid,tanh,softplus,elu,leaky_relu,softmax,layer_norm,matmul,gemm_add_relu,gemm_multiply_leakyrelu,sum_reduction,max_reduction

if [[ -e "$out" ]]; then
  echo "generalization.sh: $out exists: remove it or name another directory" >&2
  exit 1
fi
mkdir -p "$out"
"$drk" tasks generate --out "$out/tasks" --count 32 --seed "$seed" | tee "$out/generate.txt"
generated=$(cd "$out/tasks" && ls *.yaml | sed 's/\.yaml$//' | paste -sd, -)

# Every run plays 8 tasks a step (64 candidates), whatever its task list.
train() {  # NAME TASKS_DIR TASKS
  "$drk" run configs/quickstart.yaml --fresh --set "run_dir=$out/$1" --set "experiment.tasks_dir=$2" \
    --set "experiment.tasks=[$3]" --set "experiment.steps=$steps" --set experiment.tasks_per_step=8 \
    --set "experiment.seed=$seed" \
    > "$out/$1.txt" 2>&1
  tail -n 25 "$out/$1.txt"
}
train ported kernels/tasks "$ported"
train generated "$out/tasks" "$generated"
train both "kernels/tasks:$out/tasks" "$ported,$generated"

evaluate() {  # NAME [POLICY_RUN]
  local init=()
  [[ $# -gt 1 ]] && init=(--set "experiment.init_policy=$2")
  "$drk" run configs/quickstart.yaml --fresh --set "run_dir=$out/eval-$1" --set "experiment.tasks=[$held_out]" \
    --set experiment.steps=2 --set experiment.learning_rate=0 --set "experiment.seed=$seed" "${init[@]}" > "$out/eval-$1.txt" 2>&1
  echo "== held out, $1: $(grep -E '^(mean reward|Fast@|vs median)' "$out/eval-$1.txt" | paste -sd' ' -)"
  # Every candidate's speedup, not only each task's best: how good a typical sample of the policy is.
  python3 - "$out/eval-$1/archive.sqlite" <<'PY'
import math, sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = db.execute("SELECT c.task, r.speedup FROM results r JOIN candidates c ON c.id = r.candidate_id "
                  "WHERE r.correct AND r.speedup > 0").fetchall()
by_task = {}
for task, speedup in rows:
    by_task.setdefault(task, []).append(math.log(speedup))
geomean = lambda logs: math.exp(sum(logs) / len(logs))
print("   geometric mean over %d verified candidates %.3fx; per task: %s" % (
    len(rows), geomean([l for logs in by_task.values() for l in logs]),
    ", ".join("%s %.2fx" % (task, geomean(logs)) for task, logs in sorted(by_task.items()))))
PY
}
evaluate untrained
evaluate ported "$out/ported"
evaluate generated "$out/generated"
evaluate both "$out/both"
