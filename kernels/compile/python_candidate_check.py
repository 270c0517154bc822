"""The compile step of a KernelBench-format Python candidate, run by the Evaluator's compile pool
as its "compiler" (kernels/compile/compiler.h, python_compiler_options()):

    python3 python_candidate_check.py -I<abi> candidate.py -o OBJECT

It reads the candidate without running any of it (ast.parse: the candidate is untrusted) and
checks what a sandbox would otherwise find only after starting: that the file parses and that it
defines `class ModelNew`. The object it writes is the candidate's source, which the sandbox runs.
Messages go to stderr in the compiler's manner ("candidate.py:3: ..."), exit status 1.
"""
import ast
import sys


def main(argv):
    source_path = next(a for a in argv if not a.startswith("-I") and a.endswith(".py") and a != argv[0])
    object_path = argv[argv.index("-o") + 1]
    with open(source_path, encoding="utf-8") as f:
        source = f.read()
    try:
        tree = ast.parse(source, filename=source_path)
    except SyntaxError as e:
        print(f"{source_path}:{e.lineno}: syntax error: {e.msg}", file=sys.stderr)
        return 1
    defined = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    defined |= {t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets
                if isinstance(t, ast.Name)}
    if "ModelNew" not in defined:
        print(f"{source_path}:1: error: the candidate defines no ModelNew: a KernelBench candidate defines "
              "class ModelNew(nn.Module) at the top level", file=sys.stderr)
        return 1
    with open(object_path, "w", encoding="utf-8") as f:
        f.write(source)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
