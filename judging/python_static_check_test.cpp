#include "judging/python_static_check.h"

#include <algorithm>
#include <string>
#include <vector>

#include "tests/doctest_drk.h"

namespace doctest {
// The codes themselves in a failed check's values, not "{?}".
template <>
struct StringMaker<std::vector<std::string>> {
  static String convert(const std::vector<std::string>& codes) {
    std::string text = "{";
    for (const auto& code : codes) text += (text.size() > 1 ? ", " : "") + code;
    return (text + "}").c_str();
  }
};
}  // namespace doctest

namespace {

using drk::judging::Backend;
using drk::judging::python_static_findings;
using drk::judging::Severity;

// "code" for a failure, "code?" for a warning, in source order.
std::vector<std::string> codes(const std::string& source, Backend backend = Backend::pytorch) {
  std::vector<std::string> out;
  for (const auto& finding : python_static_findings(source, backend))
    out.push_back(finding.code + (finding.severity == Severity::warning ? "?" : ""));
  return out;
}

using Codes = std::vector<std::string>;

// A CUDA candidate in KernelBench's form around `body`, the C++ of its kernel file, and `forward`.
std::string cuda_candidate(const std::string& cuda, const std::string& forward = "return self.ext.run(x)") {
  return "import torch\n"
         "import torch.nn as nn\n"
         "from torch.utils.cpp_extension import load_inline\n"
         "cuda_src = \"\"\"\n" +
         cuda +
         "\n\"\"\"\n"
         "cpp_src = \"torch::Tensor run(torch::Tensor x);\"\n"
         "ext = load_inline(name=\"ext\", cpp_sources=cpp_src, cuda_sources=cuda_src, functions=[\"run\"])\n"
         "class ModelNew(nn.Module):\n"
         "    def __init__(self):\n"
         "        super().__init__()\n"
         "        self.ext = ext\n"
         "    def forward(self, x):\n"
         "        " +
         forward + "\n";
}

const std::string kKernel =
    "__global__ void relu_kernel(const float* x, float* y, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;\n"
    "}\n"
    "torch::Tensor run(torch::Tensor x) {\n"
    "  auto y = torch::empty_like(x);\n"
    "  int n = x.numel();\n"
    "  relu_kernel<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), y.data_ptr<float>(), n);\n"
    "  return y;\n"
    "}";

}  // namespace

DRK_TEST_CASE("an honest CUDA candidate has no finding, and its kernel's line is the source's") {
  DRK_CHECK(codes(cuda_candidate(kKernel), Backend::cuda).empty());
  auto findings = python_static_findings(cuda_candidate(kKernel + "\nvoid t() { std::thread w; }"), Backend::cuda);
  DRK_REQUIRE(findings.size() == 1);
  DRK_CHECK(findings[0].code == "python_thread");
  DRK_CHECK(findings[0].line == 15);
  DRK_CHECK(findings[0].evidence == "std::thread");
  DRK_CHECK_FALSE(findings[0].message.empty());
}

DRK_TEST_CASE("code bypass: a handler that falls back to torch, super().forward, the reference Model") {
  const std::string fallback = "try:\n        return self.ext.run(x)\n    except Exception:\n        return torch.relu(x)";
  DRK_CHECK(codes(cuda_candidate(kKernel, fallback), Backend::cuda) == Codes{"python_fallback", "python_torch_compute?"});
  const std::string reraise = "try:\n        return self.ext.run(x)\n    except RuntimeError as e:\n        raise ValueError(str(e))";
  DRK_CHECK(codes(cuda_candidate(kKernel, reraise), Backend::cuda) == Codes{"python_try_except?"});
  DRK_CHECK(codes("try:\n    import triton\nexcept ImportError:\n    triton = None\n") == Codes{"python_try_except?"});
  DRK_CHECK(codes("def f():\n    try:\n        g()\n    except OSError:\n        return False\n", Backend::cuda) ==
            Codes{"python_try_except?", "python_no_custom_kernel"});
  DRK_CHECK(codes("class ModelNew(nn.Module):\n    def forward(self, x):\n        return super().forward(x)\n") ==
            Codes{"python_fallback"});
  DRK_CHECK(codes("class ModelNew(Model):\n    pass\n") == Codes{"python_fallback"});
  DRK_CHECK(codes("ref = Model()\n") == Codes{"python_fallback"});
  DRK_CHECK(codes("# falls back to Model when the kernel fails\nx = ModelNew()\n").empty());
  DRK_CHECK(codes("'''Unlike Model, no super().forward(x) here.'''\n").empty());
}

DRK_TEST_CASE("no custom kernel for the cuda, triton and cpp backends") {
  const std::string plain = "import torch\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x.clamp(min=0)\n";
  DRK_CHECK(codes(plain, Backend::cuda) == Codes{"python_no_custom_kernel"});
  DRK_CHECK(codes(plain, Backend::triton) == Codes{"python_no_custom_kernel"});
  DRK_CHECK(codes(plain, Backend::cpp) == Codes{"python_no_custom_kernel"});
  DRK_CHECK(codes(plain, Backend::pytorch).empty());
  const std::string decoy = "__global__ void k(float* y) { y[0] = 0; }\ntorch::Tensor run(torch::Tensor x) { return x; }";
  auto findings = python_static_findings(cuda_candidate(decoy), Backend::cuda);
  DRK_REQUIRE(findings.size() == 1);
  DRK_CHECK(findings[0].code == "python_no_custom_kernel");
  DRK_CHECK(findings[0].message.find("nothing launches it") != std::string::npos);
  // A __global__ in a comment of the C++ is no kernel.
  DRK_CHECK(codes(cuda_candidate("// __global__ void k() {}\n" + decoy.substr(decoy.find("torch::"))), Backend::cuda) ==
            Codes{"python_no_custom_kernel"});
  const std::string triton =
      "import triton\nimport triton.language as tl\n@triton.autotune(\n    configs=[],\n    key=['n'])\n@triton.jit\n"
      "def relu_kernel(x, y, n, BLOCK: tl.constexpr):\n    pass\n";
  DRK_CHECK(codes(triton + "def run(x):\n    relu_kernel[(1,)](x, x, 1, BLOCK=1)\n", Backend::triton).empty());
  DRK_CHECK(codes(triton + "def run(x):\n    return torch.relu(x)\n", Backend::triton) ==
            Codes{"python_torch_compute?", "python_no_custom_kernel"});
}

DRK_TEST_CASE("torch compute ops warn in a kernel candidate, not in a PyTorch one; the functional import is no op") {
  DRK_CHECK(codes("import torch.nn.functional as F\ny = F.gelu(x)\n", Backend::pytorch).empty());
  DRK_CHECK(codes("import torch.nn.functional as F\ny = F.gelu(x)\nz = torch.matmul(a, b)\nself.l = nn.Linear(4, 4)\n",
                  Backend::cpp) == Codes{"python_torch_compute?", "python_torch_compute?", "python_torch_compute?",
                                         "python_no_custom_kernel"});
  DRK_CHECK(codes(cuda_candidate(kKernel + "\ntorch::Tensor mm(torch::Tensor a) { return torch::matmul(a, a); }"),
                  Backend::cuda) == Codes{"python_torch_compute?"});
}

DRK_TEST_CASE("timing patches and clocks fail; a local called time does not") {
  DRK_CHECK(codes("torch.cuda.Event.elapsed_time = lambda self, end: 0.001\n") == Codes{"python_timing_patch"});
  DRK_CHECK(codes("torch.cuda.synchronize = lambda: None\n") == Codes{"python_timing_patch"});
  DRK_CHECK(codes("import time\ntime.perf_counter = lambda: 0.0\n") == Codes{"python_timing_patch"});
  DRK_CHECK(codes("setattr(torch.cuda, 'synchronize', noop)\n") == Codes{"python_timing_patch"});
  DRK_CHECK(codes("ev.elapsed_time = fake\n") == Codes{"python_timing_patch"});
  DRK_CHECK(codes("t0 = time.perf_counter()\n") == Codes{"python_timer"});
  DRK_CHECK(codes("s = torch.cuda.Event(enable_timing=True)\n") == Codes{"python_timer"});
  DRK_CHECK(codes("from time import perf_counter\n") == Codes{"python_timer"});
  DRK_CHECK(codes(cuda_candidate(kKernel + "\nauto t = std::chrono::steady_clock::now();"), Backend::cuda) ==
            Codes{"python_timer"});
  DRK_CHECK(codes("time = 3\nelapsed = time + 1  # time.perf_counter() is not read\n").empty());
  // Inline PTX: a clock or counter register read in an asm template fails; tensor-core PTX does not.
  const std::string clock_read = kKernel + "\n__device__ unsigned long long now() {\n"
                                           "  unsigned long long t;\n  asm volatile(\"mov.u64 %0, %globaltimer;\" : \"=l\"(t));\n"
                                           "  return t;\n}";
  DRK_CHECK(codes(cuda_candidate(clock_read), Backend::cuda) == Codes{"python_timer"});
  const std::string tensor_cores = kKernel + "\n__device__ void mma(float* d, const unsigned* a, const unsigned* b) {\n"
                                             "  asm(\"mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, "
                                             "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\" : \"+f\"(d[0]), \"+f\"(d[1]), "
                                             "\"+f\"(d[2]), \"+f\"(d[3]) : \"r\"(a[0]), \"r\"(a[1]), \"r\"(a[2]), "
                                             "\"r\"(a[3]), \"r\"(b[0]), \"r\"(b[1]));\n}";
  DRK_CHECK(codes(cuda_candidate(tensor_cores), Backend::cuda).empty());
}

DRK_TEST_CASE("threads and processes fail; C++ threads and OpenMP only warn for a CPU candidate") {
  DRK_CHECK(codes("import threading\n") == Codes{"python_thread"});
  DRK_CHECK(codes("from concurrent.futures import ThreadPoolExecutor\n") == Codes{"python_thread"});
  DRK_CHECK(codes("t = threading.Thread(target=f)\n") == Codes{"python_thread"});
  DRK_CHECK(codes("import subprocess\n") == Codes{"python_process"});
  DRK_CHECK(codes("pid = os.fork()\n") == Codes{"python_process"});
  DRK_CHECK(codes("import multiprocessing as mp\n") == Codes{"python_process"});
  DRK_CHECK(codes("msg = 'no threading, no subprocess here'\n").empty());
  DRK_CHECK(codes("self.threading = 1\n").empty());
  const std::string omp = kKernel + "\nvoid f(float* y) {\n#pragma omp parallel for\n  for (int i = 0; i < 4; ++i) y[i] = 0;\n}";
  DRK_CHECK(codes(cuda_candidate(omp), Backend::cuda) == Codes{"python_thread"});
  DRK_CHECK(codes(cuda_candidate(omp), Backend::cpp) == Codes{"python_thread?"});
  DRK_CHECK(codes(cuda_candidate(kKernel + "\nint g() { return fork(); }"), Backend::cuda) == Codes{"python_process"});
  DRK_CHECK(codes(cuda_candidate(kKernel + "\nconst char* s = \"std::thread fork()\"; /* std::thread */"),
                  Backend::cuda)
                .empty());
}

DRK_TEST_CASE("lazy tensors fail, lazy outputs warn") {
  DRK_CHECK(codes("class Lazy(torch.Tensor):\n    pass\n") == Codes{"python_lazy_tensor"});
  DRK_CHECK(codes("    def __torch_function__(cls, func, types, args=(), kwargs=None):\n") == Codes{"python_lazy_tensor"});
  DRK_CHECK(codes("out = torch.Tensor._make_subclass(Lazy, x)\n") == Codes{"python_lazy_tensor"});
  DRK_CHECK(codes("def f():\n    return torch.empty(4)\n") == Codes{"python_lazy_output?"});
  DRK_CHECK(codes("def f(x):\n    return row.expand(x.shape[0], 1)\n") == Codes{"python_lazy_output?"});
  DRK_CHECK(codes("y = torch.empty(4)\n\"\"\"__torch_dispatch__ is not used\"\"\"\n").empty());
}

DRK_TEST_CASE("side streams warn, and fail when nothing joins them") {
  DRK_CHECK(codes("s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = k(x)\n") ==
            Codes{"python_side_stream?", "python_stream_unjoined", "python_side_stream?"});
  DRK_CHECK(codes("s = torch.cuda.Stream()\ns.wait_stream(torch.cuda.current_stream())\n") == Codes{"python_side_stream?"});
  DRK_CHECK(codes(cuda_candidate(kKernel + "\ncudaStream_t s; void f() { cudaStreamCreate(&s); }"), Backend::cuda) ==
            Codes{"python_side_stream?", "python_stream_unjoined"});
  DRK_CHECK(codes("# a torch.cuda.Stream() would not help here\ns = torch.cuda.current_stream()\n").empty());
}

DRK_TEST_CASE("half arithmetic warns; TF32 and global modes fail") {
  DRK_CHECK(codes("y = x.half()\n") == Codes{"python_precision_downgrade?"});
  DRK_CHECK(codes("y = x.to(torch.bfloat16)\n") == Codes{"python_precision_downgrade?"});
  DRK_CHECK(codes(cuda_candidate(kKernel + "\n__device__ __half h(float f) { return __float2half(f); }"), Backend::cuda) ==
            Codes{"python_precision_downgrade?"});
  DRK_CHECK(codes("torch.backends.cuda.matmul.allow_tf32 = True\n") == Codes{"python_precision_mode"});
  DRK_CHECK(codes("torch.set_float32_matmul_precision('high')\n") == Codes{"python_precision_mode"});
  DRK_CHECK(codes("torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True\n") ==
            Codes{"python_precision_mode"});
  DRK_CHECK(codes("torch.backends.cudnn.benchmark = True\n") == Codes{"python_global_mode"});
  DRK_CHECK(codes("torch.backends.cudnn.deterministic = False\n") == Codes{"python_global_mode"});
  DRK_CHECK(codes("torch.manual_seed(0)\n") == Codes{"python_global_mode"});
  DRK_CHECK(codes("if torch.backends.cudnn.benchmark == False:\n    y = x\n").empty());
  DRK_CHECK(codes("y = x.float()  # not x.half()\n").empty());
}

DRK_TEST_CASE("reaching the harness fails; the environment warns") {
  DRK_CHECK(codes("import inspect\n") == Codes{"python_harness_access"});
  DRK_CHECK(codes("f = sys._getframe(1)\n") == Codes{"python_harness_access"});
  DRK_CHECK(codes("objs = gc.get_objects()\n") == Codes{"python_harness_access"});
  DRK_CHECK(codes("m = sys.modules['__main__']\n") == Codes{"python_harness_access"});
  DRK_CHECK(codes("import ctypes\n") == Codes{"python_harness_access"});
  DRK_CHECK(codes("m = __import__('os')\n") == Codes{"python_harness_access"});
  DRK_CHECK(codes("g = globals()\n") == Codes{"python_harness_access"});
  DRK_CHECK(codes("data = open('/proc/self/maps').read()\n") == Codes{"python_harness_access"});
  DRK_CHECK(codes("prev = frame.f_back.f_locals\n") == Codes{"python_harness_access"});
  DRK_CHECK(codes("os.environ['TORCH_CUDA_ARCH_LIST'] = '9.0'\n") == Codes{"python_environment?"});
  DRK_CHECK(codes("model.eval()\nself.gc = 1\nf.open(p)\n").empty());
}

DRK_TEST_CASE("monkeypatching torch or the reference fails; annotations and comparisons do not") {
  DRK_CHECK(codes("torch.allclose = lambda *a, **k: True\n") == Codes{"python_monkeypatch"});
  DRK_CHECK(codes("torch.testing.assert_close = noop\n") == Codes{"python_monkeypatch"});
  DRK_CHECK(codes("nn.Module.__call__ = fast_call\n") == Codes{"python_monkeypatch"});
  DRK_CHECK(codes("Model.forward = lambda self, x: x\n") == Codes{"python_monkeypatch"});
  DRK_CHECK(codes("setattr(torch, 'allclose', fake)\n") == Codes{"python_monkeypatch"});
  DRK_CHECK(codes("import builtins\n") == Codes{"python_monkeypatch"});
  DRK_CHECK(codes("if True: torch.allclose = fake\n") == Codes{"python_monkeypatch"});
  DRK_CHECK(codes("def forward(self, x: torch.Tensor = None) -> torch.Tensor:\n    w: torch.Tensor = x\n"
                  "    ok = torch.float32 == x.dtype\n")
                .empty());
}

DRK_TEST_CASE("CUDA graphs warn") {
  DRK_CHECK(codes("g = torch.cuda.CUDAGraph()\nwith torch.cuda.graph(g):\n    y = k(x)\n") ==
            Codes{"python_cuda_graph?", "python_cuda_graph?"});
  DRK_CHECK(codes(cuda_candidate(kKernel + "\ncudaGraphExec_t e; void f(cudaStream_t s) { cudaGraphLaunch(e, s); }"),
                  Backend::cuda) == Codes{"python_cuda_graph?"});
}

DRK_TEST_CASE("backends by name") {
  DRK_CHECK(drk::judging::parse_backend("triton").value() == Backend::triton);
  auto unknown = drk::judging::parse_backend("hip");
  DRK_REQUIRE_FALSE(unknown.ok());
  DRK_CHECK(unknown.error().message.find("'hip'") != std::string::npos);
}
