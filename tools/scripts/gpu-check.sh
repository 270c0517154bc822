#!/usr/bin/env bash
# On the GPU machine (through the device tool, carrying .gpu/ from tools/scripts/gpu-stage.sh):
# builds with the machine's CUDA LibTorch, runs every test (the GPU ones for real), runs the
# GPU benchmarks, and prints a short table last. Results also go to $OUT when it is set.
#   device run, carry [".gpu"]:  bash tools/scripts/gpu-check.sh [--gpu-only]
# With $KERNELBENCH_DIR (a KernelBench checkout or levelN folder, carried too) it also evaluates
# each of its problems' own Model as a candidate on the GPU (drk bench kernelbench --references),
# going on from $KERNELBENCH_RESULTS (a folder with an earlier call's kernelbench-references*.json),
# splits two of its level-3 models on the GPU (drk model split --device cuda), and measures one
# whole model's speedup with Triton kernels in place of its hottest subgraph (whole-model.sh).
# --gpu-only builds only drk, the sandboxes and the GPU test programs and leaves the CPU tests to
# CI. Neither it nor the whole fits one 10-minute device call any more; --only PARTS (implies
# --gpu-only; comma-separated) runs some of its parts, each of which fits one: tests (the GPU test
# programs), corpora (the CUDA and Python hack corpora, KernelGYM's client against drk serve),
# builds (the load_inline builds), benches (energy, the probes, tools/bench/*.sh, and the
# KernelBench sweep with $KERNELBENCH_DIR). On a machine still warm a later part builds nothing.
set -uo pipefail
gpu_only=false
parts="tests corpora builds benches"
usage="usage: gpu-check.sh [--gpu-only] [--only tests,corpora,builds,benches]"
while [ $# -gt 0 ]; do
  case "$1" in
    --gpu-only) gpu_only=true ;;
    --only)
      parts=$(echo "${2:-}" | tr ',' ' ')
      for part in $parts; do
        case "$part" in
          tests|corpora|builds|benches) ;;
          *) echo "gpu-check.sh: --only takes parts among tests, corpora, builds, benches, not '$part'; $usage" >&2
             exit 2 ;;
        esac
      done
      [ -n "$parts" ] || { echo "gpu-check.sh: --only needs a part; $usage" >&2; exit 2; }
      gpu_only=true
      shift ;;
    *) echo "gpu-check.sh: unknown option '$1'; $usage" >&2; exit 2 ;;
  esac
  shift
done
want() { [[ " $parts " == *" $1 "* ]]; }
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
export BUILD_DIR=${BUILD_DIR:-build-gpu}
# The kit unpacks its packages once per folder: a folder named after the package set picks up
# packages added since (tools/scripts/gpu-stage.sh) on a machine that is still warm.
export DRK_DEPS=/tmp/drk-deps-$(ls .gpu/*.deb | md5sum | cut -c1-8)
out=${OUT:-/tmp/drk-gpu-check}
mkdir -p "$out"
rows=()
row() { rows+=("$(printf '%-34s %s' "$1" "$2")"); }

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1
row "device" "$(head -n 1 "$out/gpu.txt")"

start=$(date +%s)
source .gpu/env.sh
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release "${DRK_GPU_CMAKE_ARGS[@]}" -Wno-dev \
  > "$out/configure.log" 2>&1 || { tail -n 30 "$out/configure.log"; exit 1; }
gpu_tests=$(ctest --test-dir "$BUILD_DIR" -N -L gpu | awk '/Test +#/ {print $3}')
targets=()
$gpu_only && targets=(--target drk drk-sandbox drk-sandbox-cuda $gpu_tests)
# -k 0: build everything that can be built, so that one run shows every error.
if cmake --build "$BUILD_DIR" -j "$(nproc)" "${targets[@]}" -- -k 0 > "$out/build.log" 2>&1; then
  row "build" "ok ($(( $(date +%s) - start )) s)"
else
  row "build" "FAILED (see build.log)"
  grep -E '^FAILED|error:' "$out/build.log" | head -n 40
  printf '\n%s\n' "${rows[@]}"; exit 1
fi

# The CPU tests through ctest; the GPU ones (label gpu) once each below, with their own logs.
ctest_status=0
if $gpu_only; then
  row "tests (not gpu)" "not run (--gpu-only: CI runs them)"
else
  ctest --test-dir "$BUILD_DIR" --output-on-failure --timeout 600 -j 8 -LE gpu > "$out/ctest.log" 2>&1
  ctest_status=$?
  row "tests (not gpu)" "$(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -n 1)"
fi
want tests || gpu_tests=""
for test in $gpu_tests; do
  binary=$(find "$BUILD_DIR" -type f -name "$test" -perm -u+x | head -n 1)
  [ -n "$binary" ] || continue
  DRK_SOURCE_DIR="$root" timeout 400 "$binary" > "$out/$test.log" 2>&1
  case $? in
    0) status=passed ;;
    77) status="SKIPPED: no GPU seen" ;;  # tests/support/device_skip.h
    *) status=FAILED; ctest_status=1 ;;
  esac
  row "gpu test $test" "$status"
done

drk="$BUILD_DIR/tools/drk"
[ -x "$drk" ] || parts="tests"
if want corpora; then
  # The CUDA hack corpus on its own, for its totals (ctest's verify_corpus runs it too).
  timeout 240 "$drk" verify-corpus tests/hacks/cuda --threads 8 --deadline-s 60 > "$out/corpus-cuda.log" 2>&1 \
    && status=ok || status=FAILED
  row "cuda hack corpus" "$status: $(grep -iE 'detection|caught' "$out/corpus-cuda.log" | tail -n 1)"
  # The Python hack corpus on the GPU: its cuda runtime hacks and honest files evaluated for the
  # test's own KernelBench-format problems (tests/corpus/kernelbench), the rest judged by source.
  "$drk" kernelbench import tests/corpus/kernelbench --into "$out/corpus-python-records" > "$out/corpus-python.log" 2>&1
  timeout 300 "$drk" verify-corpus tests/hacks/python --kernelbench-dir "$out/corpus-python-records" \
    --threads 8 --deadline-s 120 --cache-dir "$out/corpus-python-cache" >> "$out/corpus-python.log" 2>&1 \
    && status=ok || status=FAILED
  row "python hack corpus" "$status: $(grep -iE 'detection|caught' "$out/corpus-python.log" | tail -n 1)"
  # A reward client written only from KernelGYM's documented API against `drk serve` on the GPU
  # (docs/gateway.md): the same ReLU as load_inline CUDA, Triton and PyTorch, each correct.
  "$drk" serve configs/quickstart.yaml --set run_dir="$out/serve" --set experiment.device=cuda --port 0 \
    --workers 2 --cache-dir "$out/serve-cache" > "$out/serve.log" 2>&1 &
  serve_pid=$!
  for _ in $(seq 60); do grep -q "listening on" "$out/serve.log" && break; sleep 1; done
  serve_url=$(grep -oE 'http://[0-9.]+:[0-9]+' "$out/serve.log" | head -n 1)
  timeout 300 python3 tools/gateway/kernelgym_client.py --url "${serve_url:-http://127.0.0.1:1}" \
    --reference tests/corpus/kernelbench/level1/19_ReLU.py --candidate cuda=tests/candidates/kernelbench/relu_cuda.py \
    --candidate triton=tests/candidates/kernelbench/relu_triton.py \
    --candidate pytorch=tests/candidates/kernelbench/relu_pytorch.py --num-warmup 10 --enable-profiling \
    --expect-correct > "$out/kernelgym-client.log" 2>&1 \
    && status=ok || status=FAILED
  kill "$serve_pid" 2>/dev/null; wait "$serve_pid" 2>/dev/null
  row "kernelgym client (drk serve)" "$status: $(grep -oE '^[a-z]+ .*speedup=[0-9.]+' "$out/kernelgym-client.log" | awk '{print $1, $NF}' | tr '\n' ' ')"
fi
if want builds; then
  # load_inline builds (docs/kernelbench.md, "Compiling load_inline candidates"): torch's own,
  # drkernel's, a new kernel behind bindings built before, with torch/extension.h and (CUDA) with
  # cuda.cu compiled whole, cold; the goal is 5 s at the median with the headers present.
  timeout 480 "$drk" bench load-inline --python python3 --kind cuda --kind cpp --samples 1 > "$out/load-inline.log" 2>&1 \
    && status=ok || status=FAILED
  row "load_inline cuda build" "$status: $(grep -E '^cuda ' "$out/load-inline.log" | tr -s ' ' | tr '\n' ' ' | cut -c1-400)"
  row "load_inline c++ build" "$(grep -E '^cpp ' "$out/load-inline.log" | tr -s ' ' | tr '\n' ' ' | cut -c1-300)"
fi
if want benches; then
  # Energy per call from NVML on a kernel long enough to read (cross_entropy at its published shape).
  "$drk" eval --task cross_entropy --candidate tests/candidates/cuda/cross_entropy.cu --device cuda --threads 8 \
    --energy-ms 500 > "$out/eval-energy.log" 2>&1 && status=ok || status=FAILED
  row "energy (cross_entropy)" "$status: $(grep -E "^energy" "$out/eval-energy.log" | cut -c13-110)"
  # What CUPTI's trace and the event pair cost a timed call (docs/gpu.md): a standalone probe.
  nvcc=/usr/local/cuda/bin/nvcc
  if "$nvcc" -O2 -arch=sm_90 tools/bench/cupti_instrumentation_probe.cu -lcupti -o "$out/cupti-probe" \
      > "$out/cupti-probe.log" 2>&1 && "$out/cupti-probe" >> "$out/cupti-probe.log" 2>&1; then
    status=ok
  else
    status=FAILED
  fi
  row "cupti probe" "$status: $(grep -E 'relu 134217728 +held +traced' "$out/cupti-probe.log" | cut -c30-150)"
  # What a fresh CUDA process pays before it can time (the per-candidate sandbox's start), by phase.
  if "$nvcc" -O2 -arch=sm_90 tools/bench/cuda_start_probe.cu -lcupti -lcublas -lnvrtc -lcuda -o "$out/start-probe" \
      > "$out/start-probe.log" 2>&1 && timeout 120 "$out/start-probe" >> "$out/start-probe.log" 2>&1; then
    status=ok
  else
    status=FAILED
  fi
  row "cuda start probe" "$status: $(grep -E '^1 at once' "$out/start-probe.log" | cut -c1-150)"
  # KernelBench's problems as their own candidates on the GPU (docs/kernelbench.md): which references
  # run here, their speedups over themselves (the harness's sanity check) and evaluations per hour.
  # Needs a KernelBench checkout (or a levelN folder) named by $KERNELBENCH_DIR; none is committed.
  # A sweep longer than one call goes on from the results of the last (their folder carried and
  # named by $KERNELBENCH_RESULTS): --resume evaluates only the problems they lack.
  if [ -n "${KERNELBENCH_DIR:-}" ]; then
    started=$(date +%s)
    resume=()
    if [ -n "${KERNELBENCH_RESULTS:-}" ] && ls "$KERNELBENCH_RESULTS"/kernelbench-references*.json > /dev/null 2>&1; then
      cp "$KERNELBENCH_RESULTS"/kernelbench-references*.json "$out/"
      resume=(--resume)
    fi
    # The GPU's busy share of the sweep's wall time (nvidia-smi's utilization, every 200 ms).
    nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 > "$out/kernelbench-utilization.txt" 2>/dev/null &
    sampler=$!
    timeout 300 "$drk" bench kernelbench --references --import-from "$KERNELBENCH_DIR" "${resume[@]}" \
      --kernelbench-dir "$out/kernelbench-records" --device cuda --out "$out/kernelbench-references.json" \
      > "$out/kernelbench-references.log" 2>&1 && status=ok || status=FAILED
    kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
    busy=$(awk '/^[0-9]+$/ {sum += $1; n++} END {if (n) printf "%.0f", sum / n; else print "?"}' "$out/kernelbench-utilization.txt")
    row "kernelbench references" "$status ($(( $(date +%s) - started )) s, GPU busy ${busy} %): $(grep -E 'speedup.*median' "$out/kernelbench-references.log" | tail -n 1 | cut -c1-100)"
    # Whole models (docs/whole-models.md): level 3's ResNet block and VGG16 split on the GPU, the
    # share of the model's time its three hottest subgraphs cover.
    for model in 8_ResNetBasicBlock 11_VGG16; do
      file=$(find "$KERNELBENCH_DIR" -path "*level3/${model}.py" | head -n 1)
      [ -n "$file" ] || continue
      timeout 240 "$drk" model split "$file" --out "$out/split-$model" --device cuda --top 3 \
        > "$out/split-$model.log" 2>&1 && status=ok || status=FAILED
      row "model split $model" "$status: $(head -n 1 "$out/split-$model.log" | cut -c1-110)"
    done
    # A whole model's speedup with Triton BatchNorm kernels in place (tools/scripts/whole-model.sh).
    timeout 300 bash tools/scripts/whole-model.sh "$drk" "$KERNELBENCH_DIR" "$out/whole-model" \
      > "$out/whole-model.log" 2>&1 && status=ok || status=FAILED
    row "whole model" "$status: $(grep '^whole model' "$out/whole-model.log" | cut -c1-110)"
  fi
  for bench in tools/bench/*.sh; do
    [ -f "$bench" ] || continue
    name=$(basename "$bench" .sh)
    # Line-buffered and bounded: a benchmark that hangs leaves what it printed and the rest of the check.
    timeout 240 stdbuf -oL bash "$bench" "$BUILD_DIR" > "$out/bench-$name.log" 2>&1 && status=ok || status=FAILED
    row "bench $name" "$status: $(tail -n 1 "$out/bench-$name.log")"
  done
fi

printf '\n== drkernel GPU check (%s) ==\n' "$(date -u +%Y-%m-%dT%H:%MZ)"
printf '%s\n' "${rows[@]}"
exit $ctest_status
