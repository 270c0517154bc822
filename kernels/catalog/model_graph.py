"""Whole models for `drk model split` and `drk model compose` (docs/whole-models.md).

    python3 model_graph.py split MODEL.py --out DIR [--top K] [--repeats N] [--device cpu|cuda] [--seed S]
    python3 model_graph.py compose MODEL.py --split DIR --candidate K=FILE.py [...] --out FILE.py

MODEL.py is a KernelBench-format file (Model, get_inputs(), get_init_inputs()), a level-3 problem
or the user's own model. `split` builds it as KernelBench does (the seed before the model and
before the inputs), traces it with torch.fx, and times every node of the graph over --repeats runs
of the reference. Consecutive nodes become one subgraph where an elementwise operation takes the
result of the node before it and nothing else does (conv, bias, relu: one subgraph; a residual add
joins the branch it ends). The K subgraphs that take the most time and can stand alone (built-in
torch.nn modules, tensor inputs, one tensor output) are each written as a KernelBench-format
problem, DIR/level2/<model>_sg<N>.py, at the shapes they meet inside the model, for `drk
kernelbench import` and `drk eval`: each is a task. DIR/split.json records every subgraph (its
nodes, time and share of the model's time, and why one could not stand alone).

`compose` writes a candidate for the whole model: a ModelNew that builds the original Model,
keeps its modules, and calls each given subgraph candidate (a ModelNew for that subgraph's
problem) in the place of the subgraph's nodes, with the original's weights loaded into it (its
parameters must have the subgraph problem's names and shapes). Evaluated with `drk eval --task
kernelbench/levelN/MODEL`, its speedup is the application-level one, beside each subgraph's.

The model file is the user's own code and runs trusted, in this process. Errors are printed with
the file they are about and the fix, and the exit code is 2; nothing is written then.
"""

import argparse
import contextlib
import functools
import importlib.util
import json
import operator
import os
import re
import sys
import textwrap
import time

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F


class UserError(Exception):
    """An input this tool refuses: the message names it and the fix."""


# Operations that map each element on its own (a subgraph grows through them).
ELEMENTWISE_MODULES = (nn.ReLU, nn.ReLU6, nn.GELU, nn.SiLU, nn.Sigmoid, nn.Tanh, nn.Hardswish, nn.Hardtanh,
                       nn.LeakyReLU, nn.ELU, nn.Softplus, nn.Mish, nn.Dropout, nn.Identity)
ELEMENTWISE_FUNCTIONS = {torch.relu, F.relu, F.relu6, F.gelu, F.silu, torch.sigmoid, F.sigmoid, torch.tanh, F.tanh,
                         F.hardswish, F.hardtanh, F.leaky_relu, F.elu, F.softplus, F.mish, F.dropout,
                         torch.add, torch.sub, torch.mul, torch.div, torch.clamp, torch.exp, torch.abs,
                         operator.add, operator.sub, operator.mul, operator.truediv, operator.iadd, operator.imul}
ELEMENTWISE_METHODS = {"relu", "sigmoid", "tanh", "add", "sub", "mul", "div", "clamp", "exp", "abs", "relu_", "add_"}
# The first lines of every file written: what fx's code may name (ALLOWED_GLOBALS below).
FILE_IMPORTS = ["import functools", "import math", "import operator", "", "import torch", "import torch.nn as nn"]
# What a written subgraph's code may name beyond its own modules.
ALLOWED_GLOBALS = {"torch", "math", "operator", "inf", "nan", "device", "builtins", "getattr", "float", "int"}


def load_file(path, label):
    if not os.path.isfile(path):
        raise UserError(f"{path}: no such file; name a KernelBench-format Python file")
    spec = importlib.util.spec_from_file_location(label, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's file: report, do not crash
        raise UserError(f"{path}: does not load: {type(exc).__name__}: {exc}")
    return module


def build(module, path, seed, device):
    for name in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, name):
            raise UserError(f"{path}: defines no `{name}`: a KernelBench-format model file has Model, get_inputs() "
                            f"and get_init_inputs()")
    torch.manual_seed(seed)
    model = module.Model(*module.get_init_inputs()).to(device)
    torch.manual_seed(seed)
    inputs = [x.to(device) if isinstance(x, torch.Tensor) else x for x in module.get_inputs()]
    return model, inputs


# nn.Module's own __call__ and __getattr__, which tracing replaces while it runs (ShapeTracer.unpatched).
MODULE_CALL, MODULE_GETATTR = nn.Module.__call__, nn.Module.__getattr__


class ValueProxy(torch.fx.Proxy):
    """A proxy whose iteration its tracer decides, without fx's reading of the caller's bytecode
    (which torch 1.13 gets wrong on Python 3.11: an IndexError)."""

    def __iter__(self):
        return self.tracer.iter(self)


class ShapeTracer(torch.fx.Tracer):
    """A tracer that runs the model on its real inputs beside the proxies, so that a forward that
    unpacks a tensor's size (`B, T, C = x.size()`, which plain symbolic tracing refuses) gets the
    sizes as constants: the model's graph at these inputs' shapes, the only ones a KernelBench
    problem has. Branching on tensor values is still refused."""

    def __init__(self, inputs):
        super().__init__()
        self.inputs = list(inputs)
        self.values = {}  # node -> its value on the real inputs

    def proxy(self, node):
        return ValueProxy(node, self)

    def real(self, argument):
        return torch.fx.node.map_aggregate(
            argument, lambda a: self.values[a.node] if isinstance(a, torch.fx.Proxy) else a)

    def create_proxy(self, kind, target, args, kwargs, *rest, **named):
        proxy = super().create_proxy(kind, target, args, kwargs, *rest, **named)
        with self.unpatched():
            self.values[proxy.node] = self.evaluate(kind, target, args, kwargs)
        return proxy

    @contextlib.contextmanager
    def unpatched(self):
        """Real calls: a module called, or a parameter read, records nothing while they run."""
        patched = nn.Module.__call__, nn.Module.__getattr__
        nn.Module.__call__, nn.Module.__getattr__ = MODULE_CALL, MODULE_GETATTR
        try:
            yield
        finally:
            nn.Module.__call__, nn.Module.__getattr__ = patched

    def evaluate(self, kind, target, args, kwargs):
        """A node's value on the real inputs, from its arguments' values."""
        if kind == "placeholder":  # forward's arguments in order: the latest placeholder is this one
            position = sum(1 for node in self.graph.nodes if node.op == "placeholder") - 1
            if position < len(self.inputs):
                return self.inputs[position]
            return args[0] if args else None  # a default of forward's beyond the inputs
        if kind == "get_attr":
            return functools.reduce(getattr, target.split("."), self.root)
        if kind == "call_module":
            return self.root.get_submodule(target)(*self.real(args), **self.real(kwargs))
        if kind == "call_function":
            return target(*self.real(args), **self.real(kwargs))
        if kind == "call_method":
            receiver, *rest = self.real(args)
            return getattr(receiver, target)(*rest, **self.real(kwargs))
        return None

    def iter(self, obj):
        value = self.values.get(obj.node)
        if isinstance(value, torch.Size):
            return iter(list(value))
        if isinstance(value, (tuple, list)):
            return iter([obj[i] for i in range(len(value))])
        return super().iter(obj)


def trace(model, inputs, path):
    """The model's fx graph: traced symbolically, or, where that is refused, at its inputs' shapes (ShapeTracer)."""
    try:
        return torch.fx.symbolic_trace(model)
    except Exception as exc:
        symbolic = f"{type(exc).__name__}: {exc}"
    tracer = ShapeTracer([x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
    try:
        with torch.no_grad():
            graph = tracer.trace(model)
    except Exception as exc:
        raise UserError(f"{path}: torch.fx cannot trace its Model ({symbolic}), nor with its inputs' shapes as "
                        f"constants ({type(exc).__name__}: {exc}); a model whose forward branches on tensor values "
                        f"is not split: give its traceable part as a Model")
    return torch.fx.GraphModule(tracer.root, graph, type(model).__name__)


class TimingInterpreter(torch.fx.Interpreter):
    """Runs the graph, timing each node (synchronising around it on CUDA) and keeping its output's
    shape and dtype."""

    def __init__(self, module, device):
        super().__init__(module)
        self.device = device
        self.seconds = {}
        self.meta = {}

    def run_node(self, n):
        if self.device == "cuda":
            torch.cuda.synchronize()
        began = time.perf_counter()
        result = super().run_node(n)
        if self.device == "cuda":
            torch.cuda.synchronize()
        self.seconds[n.name] = self.seconds.get(n.name, 0.0) + time.perf_counter() - began
        if isinstance(result, torch.Tensor):
            self.meta[n.name] = (list(result.shape), str(result.dtype).replace("torch.", ""))
        else:
            self.meta[n.name] = None
        return result


def is_elementwise(graph_module, n):
    if n.op == "call_module":
        return isinstance(graph_module.get_submodule(n.target), ELEMENTWISE_MODULES)
    if n.op == "call_function":
        return n.target in ELEMENTWISE_FUNCTIONS
    if n.op == "call_method":
        return n.target in ELEMENTWISE_METHODS
    return False


def node_inputs(n):
    found = []
    torch.fx.node.map_arg((n.args, n.kwargs), lambda a: found.append(a))
    return found


def group_nodes(graph_module):
    """Consecutive compute nodes, an elementwise node joining the group of the node before it when it
    takes that node's result, which nothing else takes."""
    groups = []
    for n in graph_module.graph.nodes:
        if n.op in ("placeholder", "output", "get_attr"):
            continue
        if groups:
            last = groups[-1][-1]
            if is_elementwise(graph_module, n) and last in node_inputs(n) and len(last.users) == 1:
                groups[-1].append(n)
                continue
        groups.append([n])
    return groups


def flat_name(target):
    return re.sub(r"[^0-9A-Za-z_]", "_", target)


def standalone_module_source(module):
    """`nn.<repr>` when it rebuilds a module of the same type and parameter shapes, else None."""
    text = "nn." + repr(module)
    try:
        rebuilt = eval(text, {"nn": nn})
    except Exception:
        return None
    if type(rebuilt) is not type(module):
        return None
    shapes = [tuple(p.shape) for p in module.parameters()]
    if [tuple(p.shape) for p in rebuilt.parameters()] != shapes:
        return None
    return text


def unknown_globals(code):
    """The names fx's code uses that a written file would not define (fx lists more than it uses)."""
    used = {name for name in code.globals if re.search(r"\b" + re.escape(name) + r"\b", code.src)}
    return sorted(used - ALLOWED_GLOBALS)


def subgraph_code(graph_module, nodes):
    """forward()'s source for `nodes` as a graph of their own (call_module targets flattened), the
    flat module names it calls, and the globals it needs; or a reason it cannot stand alone."""
    inside = set(nodes)
    external = []
    for n in nodes:
        for a in node_inputs(n):
            if a not in inside and a not in external:
                external.append(a)  # a parameter the model reads directly is an input like the others
    graph = torch.fx.Graph()
    env = {}
    for a in external:
        env[a] = graph.placeholder(a.name)
    holder = nn.Module()
    modules = {}
    for n in nodes:
        if n.op == "call_module":
            name = flat_name(n.target)
            module = graph_module.get_submodule(n.target)
            source = standalone_module_source(module)
            if source is None:
                return None, f"its module {n.target} ({type(module).__name__}) is not a built-in torch.nn module"
            holder.add_module(name, module)
            modules[name] = (n.target, source)
            env[n] = graph.call_module(name, torch.fx.node.map_arg(n.args, lambda a: env[a]),
                                       torch.fx.node.map_arg(n.kwargs, lambda a: env[a]))
        else:
            env[n] = graph.node_copy(n, lambda a: env[a])
    graph.output(env[nodes[-1]])
    code = graph.python_code(root_module="self")
    unknown = unknown_globals(code)
    if unknown:
        return None, "its code names " + ", ".join(unknown) + ", which a standalone problem does not have"
    return {"code": code.src, "modules": modules, "external": external}, None


def method_source(src):
    """fx's forward source as a method of a class body."""
    return textwrap.indent(textwrap.dedent(src).strip("\n"), "    ") + "\n"


def tensor_expression(meta):
    shape, dtype = meta
    if dtype.startswith("float") or dtype.startswith("bfloat"):
        return f"torch.randn({shape}, dtype=torch.{dtype})"
    return None


def input_draws(external, meta):
    """get_inputs()'s expression of each external input, or the reason one cannot be drawn."""
    draws = []
    for a in external:
        draw = tensor_expression(meta[a.name]) if meta.get(a.name) else None
        if draw is None:
            return None, f"its input {a.name} is not a floating tensor"
        draws.append(draw)
    return draws, None


def split(args):
    device = args.device
    model_module = load_file(args.model, "drk_model")
    model, inputs = build(model_module, args.model, args.seed, device)
    graph_module = trace(model, inputs, args.model)
    interpreter = TimingInterpreter(graph_module, device)
    with torch.no_grad():
        interpreter.run(*inputs)  # warm-up: first calls allocate and pick algorithms
        interpreter.seconds.clear()
        for _ in range(args.repeats):
            interpreter.run(*inputs)
    groups = group_nodes(graph_module)
    # The model's time is its operations' (not its inputs', parameters' and output's nodes).
    total = sum(interpreter.seconds.get(n.name, 0.0) for nodes in groups for n in nodes)
    if total <= 0:
        raise UserError(f"{args.model}: its Model did no measurable work")
    stem = re.sub(r"[^0-9A-Za-z_]", "_", os.path.splitext(os.path.basename(args.model))[0])
    records = []  # one a group, in the graph's order
    for nodes in groups:
        seconds = sum(interpreter.seconds.get(n.name, 0.0) for n in nodes) / args.repeats
        records.append({"nodes": [n.name for n in nodes],
                        "ops": [type(graph_module.get_submodule(n.target)).__name__ if n.op == "call_module"
                                else getattr(n.target, "__name__", str(n.target)) for n in nodes],
                        "seconds": seconds, "share": seconds * args.repeats / total})
    ranked = sorted(range(len(records)), key=lambda i: -records[i]["seconds"])
    problems_dir = os.path.join(args.out, "level2")
    written = 0
    files = {}
    for index in ranked:
        record = records[index]
        if written >= args.top:
            break
        nodes = groups[index]
        if interpreter.meta.get(nodes[-1].name) is None:
            record["not_standalone"] = "its result is not one tensor"
            continue
        built, why = subgraph_code(graph_module, nodes)
        if built is None:
            record["not_standalone"] = why
            continue
        draws, why = input_draws(built["external"], interpreter.meta)
        if draws is None:
            record["not_standalone"] = why
            continue
        written += 1
        name = f"{stem}_sg{written}"
        record["subgraph"] = written
        record["problem"] = f"level2/{name}.py"
        record["inputs"] = [a.name for a in built["external"]]
        record["modules"] = {flat: target for flat, (target, _) in built["modules"].items()}
        lines = [f"# Subgraph {written} of {os.path.basename(args.model)}: " + ", ".join(record["ops"]) +
                 f"; {100 * record['share']:.1f} % of the model's time on {device} (drk model split).",
                 *FILE_IMPORTS, "", "", "class Model(nn.Module):", "    def __init__(self):",
                 "        super().__init__()"]
        for flat, (_, source) in built["modules"].items():
            lines.append(f"        self.{flat} = {source}")
        lines.append("")
        lines.append(method_source(built["code"]))
        lines += ["", "def get_inputs():", "    return [" + ", ".join(draws) + "]", "", "",
                  "def get_init_inputs():", "    return []", ""]
        files[record["problem"]] = "\n".join(lines)
    os.makedirs(problems_dir, exist_ok=True)
    for relative, text in files.items():
        with open(os.path.join(args.out, relative), "w", encoding="utf-8") as out:
            out.write(text)
    summary = {"model": os.path.abspath(args.model), "device": device, "seed": args.seed, "repeats": args.repeats,
               "model_seconds": total / args.repeats, "subgraphs": records}
    with open(os.path.join(args.out, "split.json"), "w", encoding="utf-8") as out:
        json.dump(summary, out, indent=2)
    covered = sum(r["share"] for r in records if "subgraph" in r)
    print(f"{os.path.basename(args.model)}: {len(records)} subgraphs, {total / args.repeats * 1e3:.3f} ms a call on "
          f"{device}; the {written} written cover {100 * covered:.1f} % of it")
    for index in ranked:
        r = records[index]
        where = ""  # beyond --top: neither written nor refused
        if "problem" in r:
            where = r["problem"]
        elif "not_standalone" in r:
            where = "not written: " + r["not_standalone"]
        print(f"  {100 * r['share']:5.1f} %  {' + '.join(r['ops'])}  {where}".rstrip())


def parse_candidates(pairs, split_json):
    """{subgraph number: (its split.json record, the candidate's path, its source)} of --candidate N=FILE."""
    by_number = {r["subgraph"]: r for r in split_json["subgraphs"] if "subgraph" in r}
    if not by_number:
        raise UserError("the split wrote no subgraph (its split.json says why of each): there is nothing to compose")
    chosen = {}
    for pair in pairs:
        number, _, path = pair.partition("=")
        if not number.isdigit() or not path:
            raise UserError(f"--candidate {pair}: give it as N=FILE.py, N a subgraph of split.json "
                            f"({', '.join(map(str, sorted(by_number)))})")
        if int(number) not in by_number:
            raise UserError(f"--candidate {pair}: subgraph {number} is not one that was written; they are "
                            f"{', '.join(map(str, sorted(by_number)))}")
        if not os.path.isfile(path):
            raise UserError(f"--candidate {pair}: {path}: no such file")
        chosen[int(number)] = (by_number[int(number)], path, open(path, encoding="utf-8").read())
    if not chosen:
        raise UserError("give at least one --candidate N=FILE.py")
    return chosen


def in_function(name, source, returned):
    """`source` as the body of `def name():` returning `returned`: its names stay its own."""
    return f"def {name}():\n" + textwrap.indent(source, "    ") + f"\n    return {returned}\n"


def compose(args):
    split_path = os.path.join(args.split, "split.json")
    if not os.path.isfile(split_path):
        raise UserError(f"{split_path}: no such file; run `drk model split MODEL.py --out {args.split}` first")
    split_json = json.load(open(split_path, encoding="utf-8"))
    chosen = parse_candidates(args.candidate, split_json)
    model_module = load_file(args.model, "drk_model")
    model, inputs = build(model_module, args.model, split_json["seed"], "cpu")
    graph_module = trace(model, inputs, args.model)
    by_name = {n.name: n for n in graph_module.graph.nodes}
    graph = graph_module.graph
    for number, (record, _, _) in sorted(chosen.items()):
        missing = [name for name in record["nodes"] + record["inputs"] if name not in by_name]
        if missing:
            raise UserError(f"{args.model}: its graph has no node {missing[0]} of subgraph {number}: the model "
                            f"changed since the split; split it again")
        nodes = [by_name[name] for name in record["nodes"]]
        last = nodes[-1]
        graph_module.add_submodule(f"drk_subgraph_{number}", nn.Identity())  # the call's target must exist
        with graph.inserting_after(last):
            call = graph.call_module(f"drk_subgraph_{number}", tuple(by_name[name] for name in record["inputs"]))
        last.replace_all_uses_with(call)
        for n in reversed(nodes):
            graph.erase_node(n)
        by_name[last.name] = call  # a later subgraph that takes this one's result takes the call's
    # The model's modules and attributes the graph still reads, under flat names of the ModelNew.
    kept_modules, kept_attributes = {}, {}
    for n in graph.nodes:
        if n.op == "call_module" and not n.target.startswith("drk_subgraph_"):
            kept_modules[flat_name(n.target)] = n.target
            n.target = flat_name(n.target)
        elif n.op == "get_attr":
            kept_attributes[flat_name(n.target)] = n.target
            n.target = flat_name(n.target)
    code = graph.python_code(root_module="self")
    unknown = unknown_globals(code)
    if unknown:
        raise UserError(f"{args.model}: its forward names {', '.join(unknown)}, which a composed candidate does not "
                        f"have")
    # The model's own code, its class renamed: the composed file holds a copy of it, which runs the
    # subgraphs not replaced (as a hand-written ModelNew keeps the modules it does not rewrite).
    model_source = re.sub(r"\bModel\b", "_DrkModel", open(args.model, encoding="utf-8").read())
    out = ["# A whole-model candidate composed by drk model compose from " + os.path.basename(args.model) + " and " +
           ", ".join(f"subgraph {number}: {os.path.basename(path)}" for number, (_, path, _) in sorted(chosen.items())) +
           ".",
           *FILE_IMPORTS, "", "", in_function("_drk_original_model", model_source, "_DrkModel"), ""]
    for number, (_, _, source) in sorted(chosen.items()):
        out.append(in_function(f"_drk_subgraph_{number}_model", source, "ModelNew"))
        out.append("")
    out += ["class ModelNew(nn.Module):", "    def __init__(self, *init_inputs):", "        super().__init__()",
            "        original = _drk_original_model()(*init_inputs)"]
    # Members in the order of the model's parameters: KernelBench's harness gives ModelNew the
    # model's weights by position, and checks that it has the same parameters in the same order.
    position = {name: index for index, (name, _) in enumerate(model.named_parameters())}

    def first_parameter(targets):
        found = [index for name, index in position.items() for target in targets
                 if name == target or name.startswith(target + ".")]
        return min(found) if found else len(position)

    members = []
    for flat, target in kept_modules.items():
        members.append((first_parameter([target]), f"        self.{flat} = original.get_submodule({target!r})"))
    for flat, target in kept_attributes.items():
        members.append((first_parameter([target]),
                        f"        self.{flat} = functools.reduce(getattr, {target.split('.')!r}, original)"))
    for number, (record, _, _) in chosen.items():
        lines = [f"        self.drk_subgraph_{number} = _drk_subgraph_{number}_model()()",
                 "        # The model's weights under the subgraph problem's names (strict: each of them, no other).",
                 "        weights = {}",
                 f"        for flat, target in {sorted(record['modules'].items())!r}:",
                 "            for key, value in original.get_submodule(target).state_dict().items():",
                 "                weights[flat + '.' + key] = value",
                 f"        self.drk_subgraph_{number}.load_state_dict(weights)"]
        members.append((first_parameter(list(record["modules"].values())), "\n".join(lines)))
    out += [text for _, text in sorted(members, key=lambda member: member[0])]
    out.append("")
    out.append(method_source(code.src))
    text = "\n".join(out)
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"{args.out}: ModelNew for {os.path.basename(args.model)} with subgraph"
          f"{'s' if len(chosen) > 1 else ''} {', '.join(map(str, sorted(chosen)))} replaced")


def main(argv):
    parser = argparse.ArgumentParser(prog="model_graph.py")
    commands = parser.add_subparsers(dest="command", required=True)
    split_parser = commands.add_parser("split")
    split_parser.add_argument("model")
    split_parser.add_argument("--out", required=True)
    split_parser.add_argument("--top", type=int, default=3)
    split_parser.add_argument("--repeats", type=int, default=5)
    split_parser.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    split_parser.add_argument("--seed", type=int, default=42)
    compose_parser = commands.add_parser("compose")
    compose_parser.add_argument("model")
    compose_parser.add_argument("--split", required=True)
    compose_parser.add_argument("--candidate", action="append", default=[])
    compose_parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    try:
        if args.command == "split":
            if args.top < 1 or args.repeats < 1:
                raise UserError("--top and --repeats are at least 1")
            if args.device == "cuda" and not torch.cuda.is_available():
                raise UserError("--device cuda: this Python's torch sees no CUDA device")
            split(args)
        else:
            compose(args)
    except UserError as error:
        print(f"drk model {args.command}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
