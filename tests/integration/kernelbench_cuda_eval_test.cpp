// `drk eval --device cuda` on KernelBench-format Python candidates, on the GPU: the problem's
// Model judges correctness in the Evaluator's interpreter on the device; the candidate runs in
// drk-sandbox-cuda --python with torch's current stream set to the harness's timed stream; the
// problem's Model, built in the sandbox before the candidate's code runs, is the timing reference
// beside it. The problems are written here in KernelBench's format and imported with
// `drk kernelbench import` (nothing of KernelBench is in this repository). A load_inline CUDA
// candidate is built by the compile step (nvcc for the device's architecture) and cached. Skipped
// without a GPU.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/first_gpu.h"
#include "tests/support/ran_program.h"
#include "tests/support/verdict_json.h"
#include "tests/support/run_dir.h"
#include "tests/support/test_engine.h"

namespace {

using drk::testing::Ran;
using drk::testing::RunDir;

constexpr const char* kMatmul = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    """A square matrix product."""
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)

N = 1024

def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]

def get_init_inputs():
    return []
)";

// Weights from the seeded constructor, moved to the device by the harness on both sides.
constexpr const char* kConvRelu = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    """A convolution, then a ReLU."""
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.relu(self.conv(x))

def get_inputs():
    return [torch.randn(8, 3, 64, 64)]

def get_init_inputs():
    return [3, 16, 3]
)";

constexpr const char* kHonestMatmul = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.mm(A, B)
)";

constexpr const char* kHonestConvRelu = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.clamp_min(self.conv(x), 0.0)
)";

constexpr const char* kAnswersOnHost = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, A, B):
        return torch.mm(A.cpu(), B.cpu())
)";

constexpr const char* kRelu = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    """A ReLU."""
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

def get_inputs():
    return [torch.randn(256, 65536)]

def get_init_inputs():
    return []
)";

const RunDir& problems() {
  static RunDir dir;
  static const bool imported = [] {
    dir.write("KernelBench/level1/1_Square_matrix_multiplication_.py", kMatmul);
    dir.write("KernelBench/level2/1_Conv2D_ReLU.py", kConvRelu);
    dir.write("KernelBench/level1/19_ReLU.py", kRelu);
    Ran ran = drk::testing::run_program(dir, DRK_BINARY,
                                        {"kernelbench", "import", dir.file("KernelBench"), "--into", dir.file("records")});
    DRK_REQUIRE_MESSAGE(ran.exit_code == 0, ran.output);
    return true;
  }();
  (void)imported;
  return dir;
}

nlohmann::json evaluate(const std::string& task, const std::string& name, const std::string& source) {
  const RunDir& dir = problems();
  dir.write(name, source);
  Ran ran = drk::testing::run_program(dir, DRK_BINARY,
                                      {"eval", "--task", task, "--candidate", dir.file(name), "--device", "cuda",
                                       "--kernelbench-dir", dir.file("records"), "--trials", "2", "--json",
                                       "--cache-dir", dir.file("compile-cache")});
  return drk::testing::verdict_json(ran);
}

// CUDA through load_inline, launched as most generated kernels are: <<<...>>> on the default
// stream, which the harness's (blocking) timed stream orders with.
std::string inline_cuda_relu() { return drk::testing::candidate_source("kernelbench/relu_cuda.py"); }

// Triton, as most Triton candidates are written: a @triton.jit kernel launched from forward, compiled
// at its first call (the warm-up's, in a sandbox that may run ptxas and gcc) and found in the cache
// the warm-up left by the candidate's own sandbox, which may run no compiler.
std::string triton_relu() { return drk::testing::candidate_source("kernelbench/relu_triton.py"); }

bool gpu_missing() { return !drk::testing::first_gpu_or_skip(); }

}  // namespace

DRK_TEST_CASE("an honest PyTorch candidate on the GPU is correct and timed against the problem's own Model [gpu]") {
  if (gpu_missing()) return;
  auto verdict = evaluate("kernelbench/level1/1_Square_matrix_multiplication_", "matmul_new.py", kHonestMatmul);
  const auto& result = verdict["result"];
  DRK_REQUIRE_MESSAGE(result.value("correct", false), verdict.dump());
  // The same cuBLAS call on both sides: as fast as the reference, within the noise of a short run.
  const double speedup = result.value("speedup", 0.0);
  DRK_CHECK_MESSAGE((speedup > 0.7 && speedup < 1.4), verdict.dump());
  DRK_CHECK(result["candidateTiming"].value("samples", 0) > 0);
  DRK_CHECK(verdict.value("honest", false));
}

DRK_TEST_CASE("ModelNew gets Model's initial weights on the device [gpu]") {
  if (gpu_missing()) return;
  auto verdict = evaluate("kernelbench/level2/1_Conv2D_ReLU", "conv_new.py", kHonestConvRelu);
  DRK_CHECK_MESSAGE(verdict["result"].value("correct", false), verdict.dump());
}

DRK_TEST_CASE("an answer on the host is no answer on the device [gpu]") {
  if (gpu_missing()) return;
  auto verdict = evaluate("kernelbench/level1/1_Square_matrix_multiplication_", "host_new.py", kAnswersOnHost);
  DRK_CHECK_FALSE(verdict["result"].value("correct", true));
  DRK_CHECK_MESSAGE(verdict["result"].value("errorText", "").find("is on cpu") != std::string::npos, verdict.dump());
}

DRK_TEST_CASE("a load_inline CUDA candidate is built by the compile step, correct, timed, and a cache hit the second time [gpu]") {
  if (gpu_missing()) return;
  auto first = evaluate("kernelbench/level1/19_ReLU", "inline_cuda_relu.py", inline_cuda_relu());
  const auto& result = first["result"];
  DRK_REQUIRE_MESSAGE(result.value("correct", false), first.dump());
  DRK_CHECK_FALSE(result.value("compileCached", true));
  // One pass over the tensor on both sides: within a factor of two of torch.relu.
  const double speedup = result.value("speedup", 0.0);
  DRK_CHECK_MESSAGE((speedup > 0.5 && speedup < 2.0), first.dump());
  auto second = evaluate("kernelbench/level1/19_ReLU", "inline_cuda_relu.py", inline_cuda_relu());
  DRK_CHECK_MESSAGE(second["result"].value("correct", false), second.dump());
  DRK_CHECK_MESSAGE(second["result"].value("compileCached", false), second.dump());
  std::printf("load_inline CUDA candidate: compile %.0f ms cold, %.0f ms cached; speedup %.3f\n",
              result.value("compileMs", 0.0), second["result"].value("compileMs", 0.0), speedup);
}

DRK_TEST_CASE("a Triton candidate compiles in its warm-up and runs from that cache in its own sandbox [gpu]") {
  if (gpu_missing()) return;
  auto verdict = evaluate("kernelbench/level1/19_ReLU", "triton_relu.py", triton_relu());
  const auto& result = verdict["result"];
  DRK_REQUIRE_MESSAGE(result.value("correct", false), verdict.dump());
  // One pass over the tensor on both sides: within a factor of two of torch.relu.
  const double speedup = result.value("speedup", 0.0);
  DRK_CHECK_MESSAGE((speedup > 0.5 && speedup < 2.0), verdict.dump());
  std::printf("Triton candidate: compile (its warm-up) %.0f ms, load %.0f ms; speedup %.3f\n",
              result.value("compileMs", 0.0), result.value("loadMs", 0.0), speedup);
}
