#!/usr/bin/env python3
"""The same CUDA kernel evaluated by drkernel and by the KernelBench harness's method, side by side.

drkernel: `drk eval --device cuda --json` on a candidate of tests/candidates/cuda (C ABI), once
with an empty compile cache (cold) and once more with it (warm); the wall time of each process.

KernelBench's method (src/kernelbench/eval.py, eval_kernel_against_ref, as of 2026): the kernel
is wrapped in a `ModelNew` whose source calls torch.utils.cpp_extension.load_inline; the source
is exec'ed with TORCH_EXTENSIONS_DIR set to a build folder (which compiles the extension), the
outputs of Model and ModelNew are compared with torch.allclose(atol=rtol=1e-4, fp32) over
`--trials` fresh inputs, then ModelNew and Model are each timed with CUDA events (3 warm-up
calls, 1 discarded, `--perf-trials` timed calls, an L2 thrash of 256 MiB before each) and the
speedup is the ratio of the means. Each evaluation runs in its own Python process, as
KernelBench's batch evaluation does; cold: an empty build folder, warm: the same folder again.
The timing function is KernelBench's own (timing.py) when `--kernelbench DIR` points at a
checkout of ScalingIntelligence/KernelBench (loaded by path: its package pulls in LLM clients
the GPU machine lacks); otherwise this script's copy of the procedure above is used, and the
output says which. No KernelBench code is part of this file.

Tasks: relu, softmax and matmul (--tasks), each with its honest candidate of
tests/candidates/cuda (TASK.cu) handed to both harnesses: to KernelBench's through a small C++
wrapper that passes torch tensors to drk_kernel on torch's current stream (the output is made
in ModelNew.forward). Inputs, the reference expression and the shapes are the task's
(kernels/tasks/TASK.yaml, read here); at the scaled shapes by default (--shapes cpu) so that
both harnesses measure the same work quickly. Per task it prints each harness's wall time of one
evaluation (cold and warm), their ratio, and both harnesses' speedups (KernelBench: ratio of
means; drkernel: ratio of medians).

  python3 tools/bench/kernelbench_compare.py --drk build-gpu/tools/drk [--kernelbench .kb] \
      [--tasks relu,softmax,matmul] [--shapes cpu|cuda]

With --problem (a KernelBench problem file, levelN/NAME.py) and --candidate files (KernelBench-format
ModelNew files: load_inline CUDA, Triton, PyTorch), both harnesses evaluate those candidates as they
are: KernelBench's way on the problem's own Model and get_inputs() (the same seed before both
constructions, TORCH_EXTENSIONS_DIR and TRITON_CACHE_DIR in a build folder of its own, cold then
warm), drkernel's with `drk kernelbench import` of the problem and `drk eval --device cuda`.

  python3 tools/bench/kernelbench_compare.py --problem KernelBench/level1/19_ReLU.py \
      --candidate relu_inline_cuda.py --candidate relu_triton.py [--kernelbench .kb]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The task's forward in torch, by task name (the task's `reference` expression).
FORWARD = {
    "relu": "torch.relu(inputs[0])",
    "softmax": "torch.softmax(inputs[0], dim=1)",
    "matmul": "torch.matmul(inputs[0], inputs[1])",
}


def read_task(name):
    """Input names and the shapes per device of kernels/tasks/NAME.yaml (no YAML library needed)."""
    with open(os.path.join(ROOT, "kernels", "tasks", name + ".yaml")) as f:
        text = f.read()
    inputs = re.findall(r"^  - \{name: (\w+),", text, re.M)
    outputs = re.search(r"^outputs: \[([^\]]*)\]", text, re.M).group(1).replace(" ", "").split(",")
    shapes = {}
    for device in ("cpu", "cuda"):
        line = re.search(r"^  %s: \{(.*)\}\s*$" % device, text, re.M).group(1)
        shapes[device] = {tensor: tuple(int(d) for d in dims.replace(" ", "").split(",") if d)
                          for tensor, dims in re.findall(r"(\w+): \[([^\]]*)\]", line)}
    return {"inputs": inputs, "output": outputs[0], "shapes": shapes}

WRAPPER = r'''
#include <ATen/cuda/CUDAContext.h>
#include <torch/extension.h>

static drk_tensor drk_view(const torch::Tensor& t) {
  drk_tensor view{};
  view.data = t.data_ptr();
  view.dtype = DRK_F32;
  view.ndim = static_cast<int32_t>(t.dim());
  for (int64_t d = 0; d < t.dim(); ++d) {
    view.shape[d] = t.size(d);
    view.strides[d] = t.stride(d);
  }
  return view;
}

static void* drk_no_workspace(const drk_context*, size_t) { return nullptr; }

void drk_run(std::vector<torch::Tensor> inputs, torch::Tensor output) {
  std::vector<drk_tensor> in;
  for (const auto& x : inputs) {
    TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "inputs: contiguous fp32 on CUDA");
    in.push_back(drk_view(x));
  }
  drk_tensor out = drk_view(output);
  drk_context ctx{};
  ctx.abi_version = DRK_ABI_VERSION;
  ctx.device = DRK_CUDA;
  ctx.stream = at::cuda::getCurrentCUDAStream().stream();
  ctx.max_threads = 1;
  ctx.workspace = &drk_no_workspace;
  TORCH_CHECK(drk_kernel(&ctx, in.data(), static_cast<int32_t>(in.size()), &out, 1) == DRK_OK, "drk_kernel failed");
}
'''

MODEL_NEW = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

drk_ext = load_inline(
    name={extension!r},
    cpp_sources="void drk_run(std::vector<torch::Tensor> inputs, torch::Tensor output);",
    cuda_sources={cuda_source!r},
    functions=["drk_run"],
    extra_include_paths=[{abi!r}],
    verbose=False,
)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = drk_ext

    def forward(self, *inputs):
        output = torch.empty({output_shape!r}, device=inputs[0].device, dtype=inputs[0].dtype)
        self.ext.drk_run(list(inputs), output)
        return output
'''


def load_time_fn(args):
    """KernelBench's timing function when its checkout is given, else this script's copy; and which."""
    import torch

    timer_source = "this script's copy of KernelBench's cuda_event procedure"
    timing_file = os.path.join(args.kernelbench or "", "src", "kernelbench", "timing.py")
    time_fn = None
    if args.kernelbench and os.path.exists(timing_file):
        try:
            import importlib.util

            spec = importlib.util.spec_from_file_location("kernelbench_timing", timing_file)
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            time_fn = module.time_execution_with_cuda_event
            timer_source = "KernelBench's timing.time_execution_with_cuda_event (" + timing_file + ")"
        except Exception as error:  # a checkout whose timing module does not load here
            timer_source += " (KernelBench's timing.py did not load: %s)" % error
    if time_fn is None:
        def time_fn(fn, inputs, num_warmup=3, num_trials=10, discard_first=1, verbose=False, device=None):
            for _ in range(num_warmup):
                fn(*inputs)
                torch.cuda.synchronize()
            torch.cuda.empty_cache()
            times = []
            for trial in range(num_trials + discard_first):
                torch.cuda.synchronize()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                thrash = torch.empty((32, 1024, 1024), dtype=torch.int64, device="cuda")
                thrash.fill_(42)
                del thrash
                start.record()
                fn(*inputs)
                end.record()
                torch.cuda.synchronize()
                if trial >= discard_first:
                    times.append(start.elapsed_time(end))
            return times

    return time_fn, timer_source


def measure(args, model, model_new, make_inputs, time_fn):
    """KernelBench's correctness trials (fresh inputs per seed, allclose at 1e-4) and its timing of
    each side; (correct trials, candidate mean us, reference mean us, correctness s, timing s)."""
    import torch

    started = time.perf_counter()
    torch.manual_seed(42)
    seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(args.trials)]
    passed = 0
    with torch.no_grad():
        for seed in seeds:
            torch.manual_seed(seed)
            xs = make_inputs()
            expected = model(*xs)
            torch.cuda.synchronize()
            got = model_new(*xs)
            torch.cuda.synchronize()
            passed += int(got.shape == expected.shape and torch.allclose(expected, got, atol=1e-4, rtol=1e-4))
    checked = time.perf_counter()
    torch.manual_seed(42)
    xs = make_inputs()
    with torch.no_grad():
        new_ms = time_fn(model_new, xs, num_trials=args.perf_trials, verbose=False, device=torch.device("cuda"))
        ref_ms = time_fn(model, xs, num_trials=args.perf_trials, verbose=False, device=torch.device("cuda"))
    timed = time.perf_counter()
    return passed, sum(new_ms) / len(new_ms) * 1e3, sum(ref_ms) / len(ref_ms) * 1e3, checked - started, timed - checked


def report(timer_source, trials, passed, new_us, ref_us, import_s, compile_s, correctness_s, timing_s):
    print(json.dumps({
        "timer": timer_source, "correct_trials": passed, "trials": trials,
        "candidate_mean_us": new_us, "reference_mean_us": ref_us,
        "speedup": ref_us / new_us if new_us > 0 else 0.0,
        "import_s": import_s, "compile_s": compile_s, "correctness_s": correctness_s, "timing_s": timing_s,
    }))


def kernelbench_one(args):
    """One evaluation the KernelBench way, in this process; prints one JSON line."""
    started = time.perf_counter()
    import torch
    import torch.nn as nn

    imported = time.perf_counter()
    time_fn, timer_source = load_time_fn(args)

    task = read_task(args.task)
    shapes = task["shapes"][args.shapes]
    forward = eval("lambda *inputs: " + FORWARD[args.task], {"torch": torch})

    class Model(nn.Module):
        def forward(self, *inputs):
            return forward(*inputs)

    with open(os.path.join(ROOT, "tests", "candidates", "cuda", args.task + ".cu")) as f:
        cuda_source = f.read() + WRAPPER
    model_new_source = "import os\nos.environ['TORCH_EXTENSIONS_DIR'] = %r\n" % args.build_dir + MODEL_NEW.format(
        extension="drk_%s_ext" % args.task, cuda_source=cuda_source, abi=os.path.join(ROOT, "kernels", "abi"),
        output_shape=list(shapes[task["output"]]))
    context = {}
    exec(compile(model_new_source, "<ModelNew>", "exec"), context)
    model_new = context["ModelNew"]().cuda()
    model = Model().cuda()
    torch.cuda.synchronize()
    compiled = time.perf_counter()

    input_shapes = [shapes[name] for name in task["inputs"]]
    passed, new_us, ref_us, correctness_s, timing_s = measure(
        args, model, model_new, lambda: [torch.rand(*shape).cuda() for shape in input_shapes], time_fn)
    report(timer_source, args.trials, passed, new_us, ref_us, imported - started, compiled - imported, correctness_s,
           timing_s)


def kernelbench_one_python(args):
    """A KernelBench-format candidate the KernelBench way, in this process: the problem file's Model
    and get_inputs(), the candidate's ModelNew (its load_inline building into --build-dir, Triton's
    cache there too), the same seed before each construction; prints one JSON line."""
    started = time.perf_counter()
    import torch

    imported = time.perf_counter()
    time_fn, timer_source = load_time_fn(args)
    os.environ["TORCH_EXTENSIONS_DIR"] = args.build_dir
    os.environ["TRITON_CACHE_DIR"] = os.path.join(args.build_dir, "triton")
    problem, candidate = {}, {}
    for path, namespace in ((args.problem, problem), (args.candidate, candidate)):
        with open(path) as f:
            exec(compile(f.read(), path, "exec"), namespace)
    init_inputs = problem["get_init_inputs"]()
    torch.manual_seed(42)
    model = problem["Model"](*init_inputs).cuda()
    torch.manual_seed(42)
    model_new = candidate["ModelNew"](*init_inputs).cuda()
    torch.cuda.synchronize()
    compiled = time.perf_counter()

    def make_inputs():
        return [x.cuda() if isinstance(x, torch.Tensor) else x for x in problem["get_inputs"]()]

    passed, new_us, ref_us, correctness_s, timing_s = measure(args, model, model_new, make_inputs, time_fn)
    report(timer_source, args.trials, passed, new_us, ref_us, imported - started, compiled - imported, correctness_s,
           timing_s)


def problem_task(problem):
    """drkernel's task name of a KernelBench problem file (.../levelN/NAME.py)."""
    level = os.path.basename(os.path.dirname(os.path.abspath(problem)))
    if not re.fullmatch(r"level\d+", level):
        raise SystemExit("--problem %s: a KernelBench problem file sits in a levelN folder (KernelBench/level1/19_ReLU.py)"
                         % problem)
    return "kernelbench/%s/%s" % (level, os.path.splitext(os.path.basename(problem))[0])


def compare_python(args, candidate, work, records):
    """Both harnesses on one KernelBench-format candidate, cold then warm; returns the rows."""
    rows = []
    name = os.path.splitext(os.path.basename(candidate))[0]
    kb_command = [sys.executable, os.path.abspath(__file__), "--one-python", "--problem", args.problem, "--candidate",
                  candidate, "--build-dir", os.path.join(work, name, "torch-extensions"), "--trials", str(args.trials),
                  "--perf-trials", str(args.perf_trials), "--kernelbench", args.kernelbench or ""]
    for label in ("cold", "warm"):
        seconds, result = run_timed(kb_command)
        rows.append(("KernelBench (its eval)", label, seconds, result))
    drk_command = [args.drk, "eval", "--task", problem_task(args.problem), "--candidate", candidate, "--device", "cuda",
                   "--kernelbench-dir", records, "--trials", str(args.trials), "--energy-ms", "0",
                   "--cache-dir", os.path.join(work, name, "drk-cache"), "--launch-latency", args.launch_latency,
                   "--json"]
    env = dict(os.environ, DRK_SOURCE_DIR=ROOT)
    for label in ("cold", "warm"):
        seconds, result = run_timed(drk_command, env)
        rows.append(("drkernel (drk eval)", label, seconds, result))
    return rows


def run_timed(command, env=None):
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit("%s failed (exit %d)" % (" ".join(command[:3]), done.returncode))
    last = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return seconds, json.loads(last[-1]) if last else {}


def compare_task(args, task_name, work):
    """Both harnesses on one task, cold then warm; returns the rows."""
    rows = []
    kb_build = os.path.join(work, task_name, "torch-extensions")
    kb_command = [sys.executable, os.path.abspath(__file__), "--one", "--task", task_name, "--build-dir", kb_build,
                  "--shapes", args.shapes, "--trials", str(args.trials), "--perf-trials", str(args.perf_trials),
                  "--kernelbench", args.kernelbench or ""]
    for label in ("cold", "warm"):
        seconds, result = run_timed(kb_command)
        rows.append(("KernelBench (load_inline)", label, seconds, result))
    cache = os.path.join(work, task_name, "drk-cache")
    drk_command = [args.drk, "eval", "--task", task_name, "--candidate",
                   os.path.join(ROOT, "tests", "candidates", "cuda", task_name + ".cu"), "--device", "cuda",
                   "--shapes", args.shapes, "--trials", str(args.trials), "--energy-ms", "0", "--cache-dir", cache,
                   "--json"]
    env = dict(os.environ, DRK_SOURCE_DIR=ROOT)
    for label in ("cold", "warm"):
        seconds, result = run_timed(drk_command, env)
        rows.append(("drkernel (drk eval)", label, seconds, result))
    return rows


def print_task(args, task_name, rows):
    task = read_task(task_name)
    shapes = task["shapes"][args.shapes]
    print("\n%s at %s shapes (%s), %d correctness trials; wall time of one evaluation (its own process)" % (
        task_name, args.shapes, ", ".join("%s %s" % (n, "x".join(map(str, shapes[n]))) for n in task["inputs"]),
        args.trials))
    return print_rows(task_name, rows)


def print_rows(task_name, rows):
    """The rows of both harnesses, cold and warm, and the summary line; the summary."""
    print("%-26s %-5s %9s %8s %12s %12s  %s" % ("harness", "cache", "seconds", "speedup", "candidate", "reference",
                                              "split"))
    for harness, label, seconds, r in rows:
        if harness.startswith("KernelBench"):
            speedup, cand, ref = r["speedup"], r["candidate_mean_us"], r["reference_mean_us"]
            split = "import %.1f s, compile %.1f s, correctness %.2f s, timing %.2f s (%d/%d correct)" % (
                r["import_s"], r["compile_s"], r["correctness_s"], r["timing_s"], r["correct_trials"], r["trials"])
        else:
            r = r.get("result", {})  # drk eval --json prints the Verdict, which holds the result
            speedup = r.get("speedup", 0.0)
            cand = r.get("candidateTiming", {}).get("medianUs", 0.0)
            ref = r.get("referenceTiming", {}).get("medianUs", 0.0)
            split = "evaluation %.2f s inside, compile %.2f s%s (%s)" % (
                r.get("evalMs", 0.0) / 1e3, r.get("compileMs", 0.0) / 1e3, ", cached" if r.get("compileCached") else "",
                "correct" if r.get("correct") else "NOT correct")
        print("%-26s %-5s %9.2f %7.3fx %10.2f us %10.2f us  %s" % (harness, label, seconds, speedup, cand, ref, split))
    kb = {label: s for h, label, s, _ in rows if h.startswith("KernelBench")}
    drk = {label: s for h, label, s, _ in rows if h.startswith("drkernel")}
    kb_speedup = rows[1][3]["speedup"]
    drk_speedup = rows[3][3].get("result", {}).get("speedup", 0.0)
    print("%s: drkernel %.2f s cold / %.2f s warm per evaluation, KernelBench %.2f s / %.2f s: drkernel is %.1fx "
          "faster cold, %.1fx warm (goal: 20x); speedups: KernelBench %.3fx (mean), drkernel %.3fx (median)" % (
              task_name, drk["cold"], drk["warm"], kb["cold"], kb["warm"], kb["cold"] / drk["cold"],
              kb["warm"] / drk["warm"], kb_speedup, drk_speedup))
    return {"task": task_name, "drk_cold_s": drk["cold"], "drk_warm_s": drk["warm"], "kernelbench_cold_s": kb["cold"],
            "kernelbench_warm_s": kb["warm"], "ratio_cold": kb["cold"] / drk["cold"], "ratio_warm": kb["warm"] / drk["warm"],
            "kernelbench_speedup": kb_speedup, "drk_speedup": drk_speedup}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--drk", default=os.path.join(ROOT, "build-gpu", "tools", "drk"))
    parser.add_argument("--kernelbench", default=os.path.join(ROOT, ".kb"), help="a KernelBench checkout (optional)")
    parser.add_argument("--tasks", default="relu,softmax,matmul", help="comma-separated, of " + ", ".join(FORWARD))
    parser.add_argument("--shapes", choices=("cpu", "cuda"), default="cpu")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--perf-trials", type=int, default=100, help="KernelBench's timed calls per side")
    parser.add_argument("--json", action="store_true", help="print one JSON object last, a row per task")
    parser.add_argument("--problem", help="a KernelBench problem file (levelN/NAME.py): compare on --candidate instead")
    parser.add_argument("--candidate", action="append", default=[],
                        help="a KernelBench-format candidate of --problem (repeatable): load_inline CUDA, Triton or PyTorch")
    parser.add_argument("--launch-latency", choices=("included", "hidden"), default="included",
                        help="drk eval's timing of the host's launches (--problem): KernelBench's timer queues its "
                             "L2 thrash right before the start event without waiting for it, so a launch shorter "
                             "than the thrash overlaps it, which hidden matches")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--one-python", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--task", help=argparse.SUPPRESS)
    parser.add_argument("--build-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        kernelbench_one(args)
        return
    if args.one_python:
        args.candidate = args.candidate[0]
        kernelbench_one_python(args)
        return
    if args.problem:
        compare_candidates(args)
        return
    tasks = [t for t in args.tasks.split(",") if t]
    unknown = [t for t in tasks if t not in FORWARD]
    if unknown:
        raise SystemExit("unknown task(s) %s: this script knows %s" % (", ".join(unknown), ", ".join(FORWARD)))

    work = tempfile.mkdtemp(prefix="drk-kb-compare-")
    summaries = []
    try:
        timer = None
        for task_name in tasks:
            rows = compare_task(args, task_name, work)
            timer = rows[0][3]["timer"]
            summaries.append(print_task(args, task_name, rows))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\nKernelBench timer: " + timer)
    if args.json:
        print(json.dumps({"shapes": args.shapes, "trials": args.trials, "timer": timer, "tasks": summaries}))
    print("per evaluation, KernelBench / drkernel: " + ", ".join(
        "%s %.1fx cold, %.1fx warm" % (t["task"], t["ratio_cold"], t["ratio_warm"]) for t in summaries))


def compare_candidates(args):
    """--problem with its --candidate files: both harnesses on each."""
    if not args.candidate:
        raise SystemExit("--problem needs at least one --candidate (a KernelBench-format ModelNew file)")
    work = tempfile.mkdtemp(prefix="drk-kb-compare-")
    summaries = []
    try:
        records = os.path.join(work, "records")
        imported = subprocess.run([args.drk, "kernelbench", "import", args.problem, "--into", records],
                                  capture_output=True, text=True)
        if imported.returncode != 0:
            raise SystemExit("drk kernelbench import %s failed: %s" % (args.problem, imported.stdout + imported.stderr))
        for candidate in args.candidate:
            rows = compare_python(args, candidate, work, records)
            print("\n%s on %s, %d correctness trials, drk's launch latency %s; wall time of one evaluation (its "
                  "own process)" % (os.path.basename(candidate), problem_task(args.problem), args.trials,
                                    args.launch_latency))
            summaries.append(print_rows(os.path.basename(candidate), rows))
            timer = rows[0][3]["timer"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\nKernelBench timer: " + timer)
    if args.json:
        print(json.dumps({"problem": args.problem, "trials": args.trials, "timer": timer, "candidates": summaries}))


if __name__ == "__main__":
    main()
