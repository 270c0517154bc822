"""How far a KernelBench model's output moves when one module's output moves by 1e-7 relative
noise (about one float32 rounding), with cuDNN's TF32 convolutions (PyTorch's default) and
without: why a float32 reference can be less precise than KernelBench's 1e-4 tolerance
(docs/verification.md, "An imprecise reference"). Needs a GPU.

    python3 tools/bench/tf32_sensitivity.py KernelBench/level3/8_ResNetBasicBlock.py [MODULE]

MODULE (default bn1) names the module whose output is perturbed, as named_modules() names it.
"""
import importlib.util
import sys

import torch


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    path, module_name = sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "bn1"
    if not torch.cuda.is_available():
        sys.exit("tf32_sensitivity.py: no CUDA device; run it on the GPU machine")
    spec = importlib.util.spec_from_file_location("problem", path)
    problem = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(problem)
    torch.manual_seed(42)
    model = problem.Model(*problem.get_init_inputs()).cuda()
    torch.manual_seed(42)
    inputs = [t.cuda() if isinstance(t, torch.Tensor) else t for t in problem.get_inputs()]
    modules = dict(model.named_modules())
    if module_name not in modules:
        sys.exit(f"tf32_sensitivity.py: {path} has no module '{module_name}'; it has: {', '.join(n for n in modules if n)}")
    for tf32 in (True, False):
        torch.backends.cudnn.allow_tf32 = tf32
        with torch.no_grad():
            reference = model(*inputs)
            hook = modules[module_name].register_forward_hook(
                lambda module, args, output: output * (1 + 1e-7 * torch.randn_like(output)))
            moved = model(*inputs)
            hook.remove()
            again = model(*inputs)
        diff = (moved - reference).abs()
        past = (diff > 1e-4 + 1e-4 * reference.abs()).sum().item()
        print(f"cudnn.allow_tf32={tf32}: {module_name} perturbed: max |diff| {diff.max().item():.3g}, "
              f"{past} of {diff.numel()} outputs past atol = rtol = 1e-4; the same input twice: "
              f"max |diff| {(again - reference).abs().max().item():.3g}")


if __name__ == "__main__":
    main()
