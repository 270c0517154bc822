#!/usr/bin/env bash
# A whole model's speedup on the GPU, beside its subgraphs' (docs/whole-models.md): splits a
# KernelBench level-3 model (MODEL, default 13_DenseNet121TransitionLayer) on cuda, writes a Triton candidate for each of its
# BatchNorm subgraphs from tests/candidates/kernelbench/batchnorm_train_triton.py, evaluates each
# on its subgraph's task (function level), composes them into the model and evaluates that on the
# model's own task (application level). Prints one line per evaluation.
#   bash tools/scripts/whole-model.sh DRK KERNELBENCH_DIR OUT_DIR [MODEL]
set -euo pipefail
if [ $# -lt 3 ] || [ $# -gt 4 ]; then
  echo "usage: whole-model.sh DRK KERNELBENCH_DIR OUT_DIR [MODEL] (DRK: the drk binary; KERNELBENCH_DIR: a checkout with level3/; MODEL: a level-3 problem's name)" >&2
  exit 2
fi
drk=$1 kernelbench=$2 out=$3 model=${4:-13_DenseNet121TransitionLayer}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
source_file=$(find "$kernelbench" -path "*level3/${model}.py" | head -n 1)
[ -n "$source_file" ] || { echo "whole-model.sh: no level3/${model}.py under $kernelbench" >&2; exit 2; }
rm -rf "$out" && mkdir -p "$out/model/level3"
cp "$source_file" "$out/model/level3/"

"$drk" model split "$out/model/level3/${model}.py" --out "$out/split" --device cuda --top 6 > "$out/split.log" 2>&1 \
  || { cat "$out/split.log"; exit 1; }
head -n 1 "$out/split.log"
for folder in split model; do
  "$drk" kernelbench import "$out/$folder" --into "$out/records" > "$out/import-$folder.log" 2>&1 \
    || { cat "$out/import-$folder.log"; exit 1; }
done

# One candidate per BatchNorm subgraph: the template with its four constants set from split.json.
python3 - "$out" "$root/tests/candidates/kernelbench/batchnorm_train_triton.py" > "$out/candidates.txt" <<'PY'
import json, re, sys
out, template = sys.argv[1], open(sys.argv[2]).read()
for subgraph in json.load(open(f"{out}/split/split.json"))["subgraphs"]:
    if "problem" not in subgraph or subgraph["ops"][0] != "BatchNorm2d":
        continue
    problem = open(f"{out}/split/{subgraph['problem']}").read()
    channels = re.search(r"nn\.BatchNorm2d\((\d+)", problem).group(1)
    settings = {"BN_NAME": repr(subgraph["nodes"][0]), "CHANNELS": channels,
                "RESIDUAL": str("add" in subgraph["ops"]), "RELU": str("ReLU" in subgraph["ops"])}
    text = template
    for name, value in settings.items():
        text, replaced = re.subn(rf"^{name} = .*$", f"{name} = {value}", text, count=1, flags=re.M)
        assert replaced == 1, name
    path = f"{out}/sg{subgraph['subgraph']}_new.py"
    open(path, "w").write(text)
    print(subgraph["subgraph"], path, " + ".join(subgraph["ops"]))
PY

summary() {  # $1: label, $2: drk eval --json output
  python3 - "$1" "$2" <<'PY'
import json, sys
text = open(sys.argv[2]).read()
if "{" not in text:  # drk eval gave no verdict: say what it printed
    print(f"{sys.argv[1]:<44} no result: {' '.join(text.split()[-40:])}")
    sys.exit(0)
verdict = json.loads(text[text.index("{"):])
result = verdict["result"]
checks = ", ".join(check.get("code", "?") for check in verdict.get("failedChecks", []))
print(f"{sys.argv[1]:<44} correct {str(result.get('correct', False)).lower():<5} honest {str(verdict.get('honest', False)).lower():<5}"
      f" speedup {result.get('speedup', 0):.3f}x  kernel {result.get('candidateTiming', {}).get('medianUs', 0):.1f} us"
      f"  reference {result.get('referenceTiming', {}).get('medianUs', 0):.1f} us"
      + (f"  widened atol {result['widenedAtol']:.3g}" if result.get("widenedAtol", 0) > 0 else "")
      + f"  {checks} {result.get('errorText', '')[:200]}")
PY
}
evaluate() {  # $1: task, $2: candidate, $3: log
  "$drk" eval --task "$1" --candidate "$2" --backend triton --device cuda --kernelbench-dir "$out/records" --json \
    > "$3" 2>&1 || true
}

compose=()
while read -r number path ops; do
  evaluate "kernelbench/level2/${model}_sg${number}" "$path" "$out/eval-sg${number}.log"
  summary "subgraph $number ($ops)" "$out/eval-sg${number}.log"
  compose+=(--candidate "${number}=${path}")
done < "$out/candidates.txt"
[ ${#compose[@]} -gt 0 ] || { echo "whole-model.sh: the split wrote no BatchNorm subgraph" >&2; exit 1; }

"$drk" model compose "$out/model/level3/${model}.py" --split "$out/split" "${compose[@]}" --out "$out/${model}_new.py" \
  > "$out/compose.log" 2>&1 || { cat "$out/compose.log"; exit 1; }
evaluate "kernelbench/level3/${model}" "$out/${model}_new.py" "$out/eval-model.log"
summary "whole model ${model}" "$out/eval-model.log"
