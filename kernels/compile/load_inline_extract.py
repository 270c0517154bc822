"""Reads a KernelBench candidate's load_inline calls without running it, or this torch's build facts.

    python3 load_inline_extract.py CANDIDATE.py OUT.json    {"extensions": [...]}: one entry per call
    python3 load_inline_extract.py --torch-facts OUT.json   what this torch's load_inline builds with
    python3 load_inline_extract.py --torch-fingerprint OUT.json
        {"fingerprint": "..."}: what the facts depend on, read without importing torch (its package
        files' sizes and times, the interpreter, the CUDA a build would find); "" without a torch

The JSON goes to OUT.json: importing torch may print warnings.

The candidate is untrusted: it is parsed (ast), never imported or run. Each call of load_inline
(`load_inline`, an alias imported from torch.utils.cpp_extension, `cpp_extension.load_inline`,
`torch.utils.cpp_extension.load_inline`) becomes an entry whose arguments are folded to constants
from literals and module-level names bound once (kernels/compile/inline_extension.h reads it); a
call whose arguments are not constants becomes {"line", "error"} naming the argument and why.
Flags are given as the shell of torch's ninja command sees them (torch strips each flag and joins
them with spaces): an empty flag vanishes, "-O3 -lineinfo" is two.
"""

import ast
import json
import shlex
import sys

# load_inline's parameters in torch's order, as far as every torch version agrees (later torch
# versions put sycl_sources after cuda_sources).
POSITIONAL = ["name", "cpp_sources", "cuda_sources"]
STRING_LISTS = ["cpp_sources", "cuda_sources", "extra_cflags", "extra_cuda_cflags", "extra_ldflags",
                "extra_include_paths"]
FLAGS = ["extra_cflags", "extra_cuda_cflags", "extra_ldflags"]
BOOLS = {"with_cuda": None, "with_pytorch_error_handling": True, "no_implicit_headers": False}
# Arguments that change where or how torch builds, not what: ours are our own.
IGNORED = {"build_directory", "verbose", "keep_intermediates", "use_pch"}
MODULE = "torch.utils.cpp_extension"


class Unresolved(Exception):
    pass


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return base and base + "." + node.attr
    return None


def bound_targets(target):
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for element in target.elts:
            yield from bound_targets(element)
    elif isinstance(target, ast.Starred):
        yield from bound_targets(target.value)


class ModuleScope:
    """Module-level names: how often each is bound, the value of those bound once by `=`, and the
    names load_inline and its module go by."""

    def __init__(self, tree):
        self.bindings = {}
        self.values = {}
        self.function_aliases = {"load_inline"}
        self.module_aliases = {MODULE, "cpp_extension"}
        self.walk(tree.body)
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                for name in node.names:
                    self.bind(name)  # rebound inside a function: not a constant

    def bind(self, name, value=None):
        self.bindings[name] = self.bindings.get(name, 0) + 1
        if value is not None:
            self.values[name] = value

    def walk(self, statements):
        for statement in statements:
            if isinstance(statement, ast.Assign):
                for target in statement.targets:
                    plain = isinstance(target, ast.Name)
                    for name in bound_targets(target):
                        self.bind(name, statement.value if plain else None)
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                self.bind(statement.target.id, statement.value)
            elif isinstance(statement, (ast.AugAssign, ast.For, ast.AsyncFor)):
                for name in bound_targets(statement.target):
                    self.bind(name)
                    self.bind(name)
            elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.bind(statement.name)
            elif isinstance(statement, ast.Import):
                for alias in statement.names:
                    if alias.asname and alias.name == MODULE:
                        self.module_aliases.add(alias.asname)
                    self.bind(alias.asname or alias.name.split(".")[0])
            elif isinstance(statement, ast.ImportFrom):
                for alias in statement.names:
                    source = (statement.module or "") + "." + alias.name
                    if statement.module == MODULE and alias.name == "load_inline":
                        self.function_aliases.add(alias.asname or alias.name)
                    elif source == MODULE:
                        self.module_aliases.add(alias.asname or alias.name)
                    self.bind(alias.asname or alias.name)
            elif isinstance(statement, (ast.With, ast.AsyncWith)):
                for item in statement.items:
                    if item.optional_vars is not None:
                        for name in bound_targets(item.optional_vars):
                            self.bind(name)
            for field in ("body", "orelse", "finalbody"):
                if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    self.walk(getattr(statement, field, []) or [])
            for handler in getattr(statement, "handlers", []) or []:
                if handler.name:
                    self.bind(handler.name)
                self.walk(handler.body)

    def is_load_inline(self, call):
        function = call.func
        if isinstance(function, ast.Name):
            return function.id in self.function_aliases
        return (isinstance(function, ast.Attribute) and function.attr == "load_inline" and
                dotted(function.value) in self.module_aliases)

    def fold(self, node, seen=()):
        """The constant `node` denotes: a str, bool, None, a list of those, or a dict of str."""
        if isinstance(node, ast.Constant):
            if node.value is None or isinstance(node.value, (str, bool)):
                return node.value
            raise Unresolved(f"a {type(node.value).__name__} where a string, a bool or None belongs")
        if isinstance(node, ast.Name):
            if node.id in seen:
                raise Unresolved(f"name '{node.id}' refers to itself")
            count = self.bindings.get(node.id, 0)
            if count == 0:
                raise Unresolved(f"name '{node.id}' is not bound at module level")
            if count > 1 or node.id not in self.values:
                raise Unresolved(f"name '{node.id}' is bound more than once or not by a plain assignment")
            return self.fold(self.values[node.id], seen + (node.id,))
        if isinstance(node, (ast.List, ast.Tuple)):
            return [self.fold(element, seen) for element in node.elts]
        if isinstance(node, ast.Dict) and None not in node.keys:
            return {self.fold(key, seen): self.fold(value, seen) for key, value in zip(node.keys, node.values)}
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.fold(node.left, seen), self.fold(node.right, seen)
            if type(left) is type(right) and isinstance(left, (str, list)):
                return left + right
            raise Unresolved("'+' of values that are not both strings or both lists")
        if isinstance(node, ast.JoinedStr):
            if all(isinstance(part, ast.Constant) for part in node.values):
                return "".join(part.value for part in node.values)
            raise Unresolved("an f-string with expressions")
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join" and
                len(node.args) == 1 and not node.keywords):
            separator, parts = self.fold(node.func.value, seen), self.fold(node.args[0], seen)
            if isinstance(separator, str) and isinstance(parts, list) and all(isinstance(p, str) for p in parts):
                return separator.join(parts)
            raise Unresolved("a join() that is not a string's join of a list of strings")
        raise Unresolved(f"a {type(node).__name__} expression is not a constant")


def string_list(value, argument):
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    raise Unresolved(f"{argument} is not a string or a list of strings")


def extension(scope, call):
    if any(isinstance(argument, ast.Starred) for argument in call.args):
        raise Unresolved("*args cannot be resolved statically: pass load_inline's arguments by name")
    if len(call.args) > len(POSITIONAL):
        raise Unresolved(f"argument {len(POSITIONAL) + 1} is positional, and what it means differs between "
                         "torch versions: pass it by name (functions=...)")
    arguments = dict(zip(POSITIONAL, call.args))
    for keyword in call.keywords:
        if keyword.arg is None:
            raise Unresolved("**kwargs cannot be resolved statically: pass load_inline's arguments by name")
        arguments[keyword.arg] = keyword.value
    values = {}
    for argument, node in arguments.items():
        if argument in IGNORED:
            continue
        try:
            values[argument] = scope.fold(node)
        except Unresolved as reason:
            raise Unresolved(f"argument {argument}: {reason}") from None
    unknown = set(values) - set(STRING_LISTS) - set(BOOLS) - {"name", "functions", "is_python_module"}
    if unknown:
        raise Unresolved(f"argument {sorted(unknown)[0]} is not supported")
    if values.get("is_python_module", True) is not True:
        raise Unresolved("argument is_python_module: only Python modules are built")
    if not isinstance(values.get("name"), str) or not values["name"].isidentifier():
        raise Unresolved("argument name: not a Python identifier")
    if "cpp_sources" not in values:
        raise Unresolved("argument cpp_sources is missing")
    result = {"name": values["name"], "line": call.lineno}
    for argument in STRING_LISTS:
        result[argument] = string_list(values.get(argument), argument)
    for argument in FLAGS:
        result[argument] = shlex.split(" ".join(flag.strip() for flag in result[argument]))
    functions = values.get("functions")
    if isinstance(functions, str):
        functions = [functions]
    if isinstance(functions, list):
        functions = {function: function for function in functions}
    if functions is not None and not (isinstance(functions, dict) and
                                      all(isinstance(k, str) and isinstance(v, str) for k, v in functions.items())):
        raise Unresolved("argument functions: not a name, a list of names or a dict of names to docstrings")
    result["functions"] = [{"name": name, "doc": doc} for name, doc in (functions or {}).items()]
    for argument, default in BOOLS.items():
        value = values.get(argument, default)
        if value is not None and not isinstance(value, bool):
            raise Unresolved(f"argument {argument}: not True, False or None")
        result[argument] = value
    return result


def extract(path):
    with open(path, "rb") as file:
        source = file.read()
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as error:
        return {"error": f"{path}:{error.lineno}: {error.msg}"}
    scope = ModuleScope(tree)
    calls = sorted((node for node in ast.walk(tree) if isinstance(node, ast.Call) and scope.is_load_inline(node)),
                   key=lambda call: (call.lineno, call.col_offset))
    extensions = []
    for call in calls:
        try:
            extensions.append(extension(scope, call))
        except Unresolved as reason:
            extensions.append({"line": call.lineno, "error": str(reason)})
    return {"extensions": extensions}


def torch_facts():
    import inspect
    import sysconfig
    import warnings

    import torch
    import torch.utils.cpp_extension as cpp_extension

    cuda = torch.version.cuda is not None
    pybind11 = {}
    for field in ["COMPILER_TYPE", "STDLIB", "BUILD_ABI"]:
        value = getattr(torch._C, f"_PYBIND11_{field}", None)
        if value is not None:
            pybind11[f"PYBIND11_{field}"] = value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # Torch 2.9 and later leave the ABI to pybind11 and pass none of them.
        builder = getattr(cpp_extension, "_get_pybind11_abi_build_flags", None)
        if builder is not None and not builder():
            pybind11 = {}
    # include_paths(cuda: bool) before torch 2.6, include_paths(device_type: str) after.
    by_device = "device_type" in inspect.signature(cpp_extension.include_paths).parameters
    cpu_includes = cpp_extension.include_paths("cpu" if by_device else False)
    cpu_libraries = cpp_extension.library_paths("cpu" if by_device else False)
    cuda_includes = cpp_extension.include_paths("cuda" if by_device else True) if cuda else cpu_includes
    cuda_libraries = cpp_extension.library_paths("cuda" if by_device else True) if cuda else cpu_libraries
    # What this torch's ninja file passes, read from its own code: torch 1.13 compiles C++14, 2.x C++17;
    # torch 2.9 and later no longer pass -D_GLIBCXX_USE_CXX11_ABI.
    ninja_code = inspect.getsource(cpp_extension._write_ninja_file_to_build_library)
    version = torch.__version__.split("+")[0]
    return {
        "version": version,
        "cuda_version": torch.version.cuda or "",
        "cuda_home": (cpp_extension.CUDA_HOME or "") if cuda else "",
        "include_paths": cpu_includes,
        "cuda_include_paths": [path for path in cuda_includes if path not in cpu_includes],
        "library_paths": cpu_libraries,
        "cuda_library_paths": [path for path in cuda_libraries if path not in cpu_libraries],
        "python_include": sysconfig.get_path("include", scheme="posix_prefix"),
        "extension_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
        "cxx_standard": "c++17" if "-std=c++17" in ninja_code else "c++14",
        "cxx11_abi": int(torch._C._GLIBCXX_USE_CXX11_ABI),
        "passes_cxx11_abi": "_GLIBCXX_USE_CXX11_ABI" in ninja_code or "_get_glibcxx_abi_build_flags" in ninja_code,
        "pybind11_defines": pybind11,
    }


def torch_fingerprint():
    import importlib.util
    import os
    import shutil
    import sysconfig

    # find_spec locates a top-level package without running it: tens of milliseconds, not seconds.
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.origin:
        return {"fingerprint": ""}
    package = os.path.dirname(spec.origin)
    files = ["__init__.py", "version.py", os.path.join("utils", "cpp_extension.py")]
    files += sorted(name for name in os.listdir(package) if name.startswith("_C") and name.endswith(".so"))
    parts = [os.path.realpath(sys.executable), sys.version, sysconfig.get_config_var("EXT_SUFFIX") or "",
             sysconfig.get_path("include", scheme="posix_prefix")]
    for name in files:
        path = os.path.join(package, name)
        try:
            status = os.stat(path)
            parts.append(f"{path} {status.st_size} {status.st_mtime_ns}")
        except OSError:
            parts.append(f"{path} absent")
    # Where torch's CUDA_HOME comes from: these variables, else the nvcc on PATH.
    for variable in ["CUDA_HOME", "CUDA_PATH"]:
        parts.append(f"{variable}={os.environ.get(variable, '')}")
    parts.append(f"nvcc={shutil.which('nvcc') or ''}")
    return {"fingerprint": "\n".join(parts)}


def main(argv):
    if len(argv) != 3:
        print("usage: load_inline_extract.py CANDIDATE.py|--torch-facts|--torch-fingerprint OUT.json", file=sys.stderr)
        return 2
    if argv[1] == "--torch-facts":
        result = torch_facts()
    elif argv[1] == "--torch-fingerprint":
        result = torch_fingerprint()
    else:
        result = extract(argv[1])
    with open(argv[2], "w") as out:
        json.dump(result, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
