"""Describes KernelBench problem files for `drk kernelbench import` (docs/kernelbench.md).

    python3 kernelbench_probe.py PROBLEM.py... --out RESULTS.jsonl [--seed N] [--run cpu|cuda]
                                 [--device-lock PATH] [--seconds-per-problem S]

Loads each problem as KernelBench does (its `Model`, `get_inputs()`, `get_init_inputs()`, each
file in a namespace of its own), then appends one JSON line per problem to RESULTS.jsonl, flushed
as soon as it is known (a crash loses only the problem at hand): the init inputs, every input (a tensor's shape and dtype,
or a plain value), every output's shape and dtype, the parameter count, the FLOPs where torch's
flop counter can count them, and the bytes a kernel must move at least. Shapes come from a run on
tensors without storage (the meta device, or fake tensors on older torch), so that a problem with
gigabytes of inputs is described in milliseconds and on any machine. With --run, the reference
also runs once for real on that device at the published shapes: its time and peak memory, or the
reason it cannot run (a missing op, out of memory); on cuda get_inputs() draws on the device. With
--device-lock, the part of that run on the device (the draw, the model's move, the calls) holds an
exclusive lock on PATH, so that probes building their models on the host at once still time their
references alone on the device.

The problem files are the user's own data and run trusted, in this process. A failure at any
stage is a value in the JSON ("error": {"stage", "message"}), never a crash: the importer reports
it with the problem's name. The exit code is 0 whenever every line was written.
"""

import argparse
import contextlib
import fcntl
import json
import math
import signal
import sys
import time
import traceback


def stage_error(stage, exc):
    last = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return {"stage": stage, "message": last}


def load_problem(path):
    source = open(path, encoding="utf-8").read()
    namespace = {"__name__": "kernelbench_problem", "__file__": path}
    exec(compile(source, path, "exec"), namespace)
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if name not in namespace:
            raise LookupError(f"the problem defines no `{name}`: a KernelBench problem has Model, "
                              f"get_inputs() and get_init_inputs()")
    return namespace


def set_seed(torch, seed):
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed(seed)


def plain_value(value):
    """A JSON form of an init input or a non-tensor input; repr() for anything else."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [plain_value(v) for v in value]
    return repr(value)


def dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def describe(torch, value):
    if isinstance(value, torch.Tensor):
        return {"kind": "tensor", "shape": list(value.shape), "dtype": dtype_name(value.dtype)}
    return {"kind": "value", "value": plain_value(value)}


def tensor_bytes(torch, value):
    if isinstance(value, torch.Tensor):
        return value.numel() * value.element_size()
    return 0


def as_list(outputs):
    return list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]


@contextlib.contextmanager
def tensor_mode(torch, on_cpu=False):
    """Factory functions make tensors without storage inside this context; yields its name. With
    on_cpu, they make tensors on the CPU as usual ("cpu")."""
    if on_cpu:
        yield "cpu"
        return
    if hasattr(torch, "device") and hasattr(torch.device("meta"), "__enter__"):
        with torch.device("meta"):
            yield "meta"
        return
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        yield "fake"


def count_flops(torch, model, inputs):
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return None
    counter = FlopCounterMode(display=False)
    with counter:
        model(*inputs)
    return int(counter.get_total_flops())


def describe_shapes(torch, problem, seed, report, on_cpu=False):
    """The storageless pass (with on_cpu, a pass on the CPU): shapes, dtypes, parameters, FLOPs."""
    set_seed(torch, seed)
    try:
        init_inputs = problem["get_init_inputs"]()
    except Exception as exc:
        report["error"] = stage_error("get_init_inputs", exc)
        return
    report["init_inputs"] = [plain_value(v) for v in init_inputs]
    with tensor_mode(torch, on_cpu) as mode:
        report["shape_mode"] = mode
        set_seed(torch, seed)
        try:
            inputs = problem["get_inputs"]()
        except Exception as exc:
            report["error"] = stage_error("get_inputs", exc)
            return
        report["inputs"] = [describe(torch, v) for v in inputs]
        try:
            set_seed(torch, seed)
            model = problem["Model"](*init_inputs)
        except Exception as exc:
            report["error"] = stage_error("construct", exc)
            return
        parameters = list(model.parameters()) + list(model.buffers())
        report["parameters"] = sum(p.numel() for p in model.parameters())
        report["parameter_bytes"] = sum(tensor_bytes(torch, p) for p in parameters)
        try:
            with torch.no_grad():
                outputs = as_list(model(*inputs))
        except Exception as exc:
            report["error"] = stage_error("forward", exc)
            return
        report["outputs"] = [describe(torch, v) for v in outputs]
        report["min_bytes"] = (sum(tensor_bytes(torch, v) for v in inputs) +
                               sum(tensor_bytes(torch, v) for v in outputs) + report["parameter_bytes"])
        if mode != "fake":
            try:
                with torch.no_grad():
                    report["flops"] = count_flops(torch, model, inputs)
            except Exception:
                report["flops"] = None


@contextlib.contextmanager
def exclusive(lock_path):
    """Holds an exclusive lock on lock_path (nothing without one); the lock ends with the block."""
    if not lock_path:
        yield
        return
    with open(lock_path, "a", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def draw_inputs(torch, problem, device):
    """get_inputs(), its factory functions making tensors on `device` where torch can (2.0 and
    later): KernelBench's published inputs (gigabytes from torch.rand) take seconds on the host and
    milliseconds on a GPU; the Evaluator draws them so too."""
    target = torch.device(device)
    if device == "cpu" or not hasattr(target, "__enter__"):
        return problem["get_inputs"]()
    with target:
        return problem["get_inputs"]()


def run_reference(torch, problem, seed, device, report, device_lock):
    """The real pass at the published shapes: time of one forward call and peak memory."""
    run = {"device": device}
    report["reference"] = run
    stage = "get_inputs"
    try:
        if device == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("this torch sees no CUDA device")
        set_seed(torch, seed)
        init_inputs = problem["get_init_inputs"]()
        stage = "construct"
        set_seed(torch, seed)
        model = problem["Model"](*init_inputs)
        with exclusive(device_lock):
            stage = "get_inputs"
            set_seed(torch, seed)
            inputs = [v.to(device) if isinstance(v, torch.Tensor) else v for v in draw_inputs(torch, problem, device)]
            stage = "construct"
            model = model.to(device)
            stage = "forward"
            if device == "cuda":
                torch.cuda.reset_peak_memory_stats()
                torch.cuda.synchronize()
            with torch.no_grad():
                model(*inputs)
                if device == "cuda":
                    torch.cuda.synchronize()
                start = time.perf_counter()
                model(*inputs)
                if device == "cuda":
                    torch.cuda.synchronize()
                run["ms"] = (time.perf_counter() - start) * 1e3
            if device == "cuda":
                run["peak_bytes"] = int(torch.cuda.max_memory_allocated())
    except Exception as exc:
        run["error"] = stage_error(stage, exc)


def probe(torch, path, seed, device, device_lock):
    report = {"file": path, "torch": torch.__version__, "python": sys.version.split()[0]}
    try:
        problem = load_problem(path)
        paragraph = (problem["Model"].__doc__ or "").strip().split("\n\n")[0]
        report["title"] = " ".join(paragraph.split())
    except Exception as exc:
        report["error"] = stage_error("load", exc)
        return report
    try:
        describe_shapes(torch, problem, seed, report)
        # A model that reads a value while it is built or run (Tensor.item()) cannot be described
        # without storage: described again on the CPU, at the published shapes.
        if report.get("error", {}).get("stage") in ("construct", "forward"):
            cpu_report = {k: v for k, v in report.items() if k in ("file", "torch", "python", "title")}
            describe_shapes(torch, problem, seed, cpu_report, on_cpu=True)
            if "error" not in cpu_report:
                report.clear()
                report.update(cpu_report)
    except Exception as exc:
        report["error"] = stage_error("describe", exc)
    if device and "error" not in report:
        run_reference(torch, problem, seed, device, report, device_lock)
    return report


class ProblemTimeout(Exception):
    pass


def on_alarm(signum, frame):
    raise ProblemTimeout("ran past its time (--seconds-per-problem)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="+")
    parser.add_argument("--out", required=True)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--run", choices=("cpu", "cuda"))
    parser.add_argument("--seconds-per-problem", type=int, default=300)
    parser.add_argument("--device-lock", help="a file locked around each reference's run on the device")
    args = parser.parse_args()
    import torch
    signal.signal(signal.SIGALRM, on_alarm)
    with open(args.out, "a", encoding="utf-8") as out:
        for path in args.problems:
            signal.alarm(args.seconds_per_problem)
            try:
                report = probe(torch, path, args.seed, args.run, args.device_lock)
            except ProblemTimeout as exc:
                report = {"file": path, "error": stage_error("probe", exc)}
            signal.alarm(0)
            out.write(json.dumps(report) + "\n")
            out.flush()
            if args.run == "cuda":
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
