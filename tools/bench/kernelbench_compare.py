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

Only the ReLU kernel is wired (tests/candidates/cuda/relu.cu through a small C++ wrapper that
hands torch tensors to drk_kernel on torch's current stream), at the task's scaled shape by
default (--shapes cpu, 256 x 4096) so that both harnesses measure the same work.

  python3 tools/bench/kernelbench_compare.py --drk build-gpu/tools/drk [--kernelbench .kb]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHAPES = {"cpu": (256, 4096), "cuda": (4096, 393216)}  # kernels/tasks/relu.yaml

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

torch::Tensor drk_relu(torch::Tensor x) {
  TORCH_CHECK(x.is_cuda() && x.is_contiguous() && x.scalar_type() == torch::kFloat32, "x: contiguous fp32 on CUDA");
  auto y = torch::empty_like(x);
  drk_tensor in = drk_view(x), out = drk_view(y);
  drk_context ctx{};
  ctx.abi_version = DRK_ABI_VERSION;
  ctx.device = DRK_CUDA;
  ctx.stream = at::cuda::getCurrentCUDAStream().stream();
  ctx.max_threads = 1;
  TORCH_CHECK(drk_kernel(&ctx, &in, 1, &out, 1) == DRK_OK, "drk_kernel failed");
  return y;
}
'''

MODEL_NEW = '''
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_ext = load_inline(
    name="drk_relu_ext",
    cpp_sources="torch::Tensor drk_relu(torch::Tensor x);",
    cuda_sources={cuda_source!r},
    functions=["drk_relu"],
    extra_include_paths=[{abi!r}],
    verbose=False,
)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.ext = relu_ext

    def forward(self, x):
        return self.ext.drk_relu(x)
'''


def kernelbench_one(args):
    """One evaluation the KernelBench way, in this process; prints one JSON line."""
    started = time.perf_counter()
    import torch
    import torch.nn as nn

    imported = time.perf_counter()
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

    class Model(nn.Module):
        def forward(self, x):
            return torch.relu(x)

    with open(os.path.join(ROOT, "tests", "candidates", "cuda", "relu.cu")) as f:
        cuda_source = f.read() + WRAPPER
    model_new_source = "import os\nos.environ['TORCH_EXTENSIONS_DIR'] = %r\n" % args.build_dir + MODEL_NEW.format(
        cuda_source=cuda_source, abi=os.path.join(ROOT, "kernels", "abi"))
    context = {}
    exec(compile(model_new_source, "<ModelNew>", "exec"), context)
    model_new = context["ModelNew"]().cuda()
    model = Model().cuda()
    torch.cuda.synchronize()
    compiled = time.perf_counter()

    shape = SHAPES[args.shapes]
    torch.manual_seed(42)
    seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(args.trials)]
    passed = 0
    with torch.no_grad():
        for seed in seeds:
            torch.manual_seed(seed)
            x = torch.rand(*shape).cuda()
            expected = model(x)
            torch.cuda.synchronize()
            got = model_new(x)
            torch.cuda.synchronize()
            passed += int(got.shape == expected.shape and torch.allclose(expected, got, atol=1e-4, rtol=1e-4))
    checked = time.perf_counter()

    torch.manual_seed(42)
    x = torch.rand(*shape).cuda()
    with torch.no_grad():
        new_ms = time_fn(model_new, [x], num_trials=args.perf_trials, verbose=False, device=torch.device("cuda"))
        ref_ms = time_fn(model, [x], num_trials=args.perf_trials, verbose=False, device=torch.device("cuda"))
    timed = time.perf_counter()
    new_mean = sum(new_ms) / len(new_ms)
    ref_mean = sum(ref_ms) / len(ref_ms)
    print(json.dumps({
        "timer": timer_source,
        "correct_trials": passed, "trials": args.trials,
        "candidate_mean_us": new_mean * 1e3, "reference_mean_us": ref_mean * 1e3,
        "speedup": ref_mean / new_mean if new_mean > 0 else 0.0,
        "import_s": imported - started, "compile_s": compiled - imported,
        "correctness_s": checked - compiled, "timing_s": timed - checked,
    }))


def run_timed(command, env=None):
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit("%s failed (exit %d)" % (" ".join(command[:3]), done.returncode))
    last = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return seconds, json.loads(last[-1]) if last else {}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--drk", default=os.path.join(ROOT, "build-gpu", "tools", "drk"))
    parser.add_argument("--kernelbench", default=os.path.join(ROOT, ".kb"), help="a KernelBench checkout (optional)")
    parser.add_argument("--shapes", choices=sorted(SHAPES), default="cpu")
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--perf-trials", type=int, default=100, help="KernelBench's timed calls per side")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--build-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        kernelbench_one(args)
        return

    work = tempfile.mkdtemp(prefix="drk-kb-compare-")
    try:
        rows = []
        kb_build = os.path.join(work, "torch-extensions")
        kb_command = [sys.executable, os.path.abspath(__file__), "--one", "--build-dir", kb_build,
                      "--shapes", args.shapes, "--trials", str(args.trials), "--perf-trials", str(args.perf_trials),
                      "--kernelbench", args.kernelbench or ""]
        for label in ("cold", "warm"):
            seconds, result = run_timed(kb_command)
            rows.append(("KernelBench (load_inline)", label, seconds, result))
        cache = os.path.join(work, "drk-cache")
        drk_command = [args.drk, "eval", "--task", "relu", "--candidate",
                       os.path.join(ROOT, "tests", "candidates", "cuda", "relu.cu"), "--device", "cuda",
                       "--shapes", args.shapes, "--trials", str(args.trials), "--cache-dir", cache, "--json"]
        env = dict(os.environ, DRK_SOURCE_DIR=ROOT)
        for label in ("cold", "warm"):
            seconds, result = run_timed(drk_command, env)
            rows.append(("drkernel (drk eval)", label, seconds, result))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print("relu at %s shapes %s, %d correctness trials; wall time of one evaluation (its own process)" %
          (args.shapes, "x".join(map(str, SHAPES[args.shapes])), args.trials))
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
    print("KernelBench timer: " + rows[0][3]["timer"])
    print("drkernel is %.1fx faster per evaluation cold, %.1fx warm (goal: 20x); speedups: KernelBench %.3fx "
          "(mean), drkernel %.3fx (median)" % (kb["cold"] / drk["cold"], kb["warm"] / drk["warm"], rows[0][3]["speedup"],
                                               rows[2][3].get("result", {}).get("speedup", 0.0)))


if __name__ == "__main__":
    main()
