// `drk kernelbench import` on problem files in KernelBench's format that the test writes itself
// (nothing of KernelBench is in this repository): every problem is recorded, a problem that
// cannot run is recorded with its reason, a probe that dies or hangs costs only its problem,
// and `drk tasks` lists the imports beside the ported tasks. Needs a Python with torch (Debian's
// python3-torch, which tools/scripts/install-deps.sh installs).
#include <string>
#include <vector>

#include "kernels/catalog/kernelbench_problem.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"
#include "tests/support/ran_program.h"

namespace {

using drk::testing::RunDir;
using drk::testing::Ran;

Ran run_drk(const RunDir& dir, const std::vector<std::string>& arguments) {
  return drk::testing::run_program(dir, DRK_BINARY, arguments);
}

constexpr const char* kRelu = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    """
    Simple model that performs a ReLU activation.
    """
    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)

batch_size = 16
dim = 1024

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []
)";

constexpr const char* kGemmScale = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    """A linear layer, then a scale."""
    def __init__(self, in_features, out_features, scale):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.scale = scale

    def forward(self, x, factor):
        return self.linear(x) * self.scale * factor

def get_inputs():
    return [torch.randn(8, 64), 3]

def get_init_inputs():
    return [64, 32, 0.5]
)";

constexpr const char* kFailsInForward = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.no_such_op(x)

def get_inputs():
    return [torch.rand(4, 4)]

def get_init_inputs():
    return []
)";

constexpr const char* kNoGetInputs = R"(import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x
def get_init_inputs():
    return []
)";

// Reads values while it is built, which a tensor without storage cannot give: described on the CPU.
constexpr const char* kReadsAValue = R"(import torch
class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.full((1,), 2.0).tolist()[0]
    def forward(self, x):
        return x * self.scale
def get_inputs():
    return [torch.rand(4, 8)]
def get_init_inputs():
    return []
)";

// Kills the Python that describes it: the import goes on with the next problem.
constexpr const char* kKillsTheProbe = R"(import os, signal, torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x
def get_inputs():
    os.kill(os.getpid(), signal.SIGKILL)
def get_init_inputs():
    return []
)";

constexpr const char* kHangs = R"(import torch
class Model(torch.nn.Module):
    def forward(self, x):
        return x
def get_inputs():
    while True:
        pass
def get_init_inputs():
    return []
)";

// The record named `name`; the test stops when there is none.
const drk::kernels::KernelBenchProblem& find(const std::vector<drk::kernels::KernelBenchProblem>& problems,
                                             const std::string& name) {
  const drk::kernels::KernelBenchProblem* found = nullptr;
  for (const auto& problem : problems)
    if (problem.name == name) found = &problem;
  DRK_REQUIRE_MESSAGE(found != nullptr, "no record of " << name);
  return *found;
}

}  // namespace

DRK_TEST_CASE("drk kernelbench import records every problem, with the reason when one cannot run") {
  RunDir dir;
  dir.write("KernelBench/KernelBench/level1/19_ReLU.py", kRelu);
  dir.write("KernelBench/KernelBench/level1/3_Broken_op.py", kFailsInForward);
  dir.write("KernelBench/KernelBench/level1/4_No_inputs.py", kNoGetInputs);
  dir.write("KernelBench/KernelBench/level1/5_Kills.py", kKillsTheProbe);
  dir.write("KernelBench/KernelBench/level1/6_Hangs.py", kHangs);
  dir.write("KernelBench/KernelBench/level1/7_Reads_a_value.py", kReadsAValue);
  dir.write("KernelBench/KernelBench/level2/17_Gemm_Scale.py", kGemmScale);
  dir.write("KernelBench/KernelBench/level2/README.md", "not a problem");
  const std::string into = dir.file("imported");

  // Two probes at once, four and three problems: the one that is killed and the one that hangs each
  // cost their own probe one problem, and the records come out the same.
  Ran imported = run_drk(dir, {"kernelbench", "import", dir.file("KernelBench"), "--into", into, "--seconds-per-problem",
                               "20", "--jobs", "2"});
  DRK_REQUIRE_MESSAGE(imported.exit_code == 0, imported.output);
  DRK_CHECK(imported.output.find("[7/7]") != std::string::npos);
  DRK_CHECK(imported.output.find("imported 7 problems") != std::string::npos);
  // The progress meter's final line (runtime/progress_meter.h), on stderr.
  DRK_CHECK(imported.output.find("drk kernelbench import: 7 of 7 problems done in") != std::string::npos);

  auto problems = drk::kernels::load_kernelbench_problems(into);
  DRK_REQUIRE(problems.ok());
  DRK_REQUIRE(problems->size() == 7);

  const auto& relu = find(*problems, "kernelbench/level1/19_ReLU");
  DRK_CHECK(relu.usable());
  DRK_CHECK(relu.level == 1);
  DRK_CHECK(relu.problem_id == 19);
  DRK_CHECK(relu.family == "elementwise");
  DRK_CHECK(relu.title == "Simple model that performs a ReLU activation.");
  DRK_CHECK(relu.source_sha256.size() == 64);
  DRK_REQUIRE(relu.inputs.size() == 1);
  DRK_CHECK(relu.inputs[0].shape == std::vector<int64_t>{16, 1024});
  DRK_CHECK(relu.inputs[0].dtype == "float32");
  DRK_REQUIRE(relu.outputs.size() == 1);
  DRK_CHECK(relu.outputs[0].shape == std::vector<int64_t>{16, 1024});
  DRK_CHECK(relu.min_bytes == 2.0 * 16 * 1024 * 4);

  const auto& gemm = find(*problems, "kernelbench/level2/17_Gemm_Scale");
  DRK_CHECK(gemm.usable());
  DRK_CHECK(gemm.family == "gemm");
  DRK_CHECK(gemm.init_inputs == "[64,32,0.5]");
  DRK_REQUIRE(gemm.inputs.size() == 2);
  DRK_CHECK(gemm.inputs[0].shape == std::vector<int64_t>{8, 64});
  DRK_CHECK(!gemm.inputs[1].tensor);
  DRK_CHECK(gemm.inputs[1].value == "3");
  DRK_CHECK(gemm.parameters == 64 * 32 + 32);
  DRK_CHECK(gemm.outputs[0].shape == std::vector<int64_t>{8, 32});

  const auto& reads = find(*problems, "kernelbench/level1/7_Reads_a_value");
  DRK_CHECK_MESSAGE(reads.usable(), (reads.failure ? reads.failure->message : ""));
  DRK_REQUIRE(reads.outputs.size() == 1);
  DRK_CHECK(reads.outputs[0].shape == std::vector<int64_t>{4, 8});

  const auto& broken = find(*problems, "kernelbench/level1/3_Broken_op");
  DRK_REQUIRE(broken.failure.has_value());
  DRK_CHECK(broken.failure->stage == "forward");
  DRK_CHECK(broken.failure->message.find("no_such_op") != std::string::npos);

  const auto& no_inputs = find(*problems, "kernelbench/level1/4_No_inputs");
  DRK_REQUIRE(no_inputs.failure.has_value());
  DRK_CHECK(no_inputs.failure->stage == "load");
  DRK_CHECK(no_inputs.failure->message.find("get_inputs") != std::string::npos);

  const auto& killed = find(*problems, "kernelbench/level1/5_Kills");
  DRK_REQUIRE(killed.failure.has_value());
  DRK_CHECK(killed.failure->stage == "probe");
  DRK_CHECK(killed.failure->message.find("signal 9") != std::string::npos);

  const auto& hangs = find(*problems, "kernelbench/level1/6_Hangs");
  DRK_REQUIRE(hangs.failure.has_value());
  DRK_CHECK(hangs.failure->message.find("ran past") != std::string::npos);

  Ran listed = run_drk(dir, {"tasks", "--kernelbench-dir", into});
  DRK_CHECK(listed.exit_code == 0);
  DRK_CHECK(listed.output.find("relu ") != std::string::npos);  // a ported task
  DRK_CHECK(listed.output.find("kernelbench/level2/17_Gemm_Scale") != std::string::npos);
  DRK_CHECK(listed.output.find("7 KernelBench problems imported") != std::string::npos);
  DRK_CHECK(listed.output.find("3 usable") != std::string::npos);

  Ran shown = run_drk(dir, {"tasks", "show", "kernelbench/level1/19_ReLU", "--kernelbench-dir", into});
  DRK_CHECK(shown.exit_code == 0);
  DRK_CHECK(shown.output.find(relu.source_sha256) != std::string::npos);
  DRK_CHECK(shown.output.find("[16, 1024] float32") != std::string::npos);
}

DRK_TEST_CASE("drk kernelbench import --run runs each reference once, probes at once taking turns to run") {
  RunDir dir;
  dir.write("problems/level1/19_ReLU.py", kRelu);
  dir.write("problems/level1/7_Reads_a_value.py", kReadsAValue);
  dir.write("problems/level2/17_Gemm_Scale.py", kGemmScale);
  const std::string into = dir.file("imported");
  Ran imported = run_drk(dir, {"kernelbench", "import", dir.file("problems"), "--into", into, "--run", "cpu", "--jobs", "2"});
  DRK_REQUIRE_MESSAGE(imported.exit_code == 0, imported.output);
  auto problems = drk::kernels::load_kernelbench_problems(into);
  DRK_REQUIRE(problems.ok());
  DRK_REQUIRE(problems->size() == 3);
  for (const auto& problem : *problems) {
    DRK_REQUIRE_MESSAGE(problem.reference_run.has_value(), problem.name);
    DRK_CHECK_MESSAGE(!problem.reference_run->failure, problem.name);
    DRK_CHECK(problem.reference_run->device == "cpu");
    DRK_CHECK_MESSAGE(problem.reference_run->ms > 0, problem.name);
  }
  DRK_CHECK(imported.output.find("ok, reference ") != std::string::npos);
}

DRK_TEST_CASE("drk kernelbench import refuses a path without problems, naming the expected layout") {
  RunDir dir;
  dir.write("empty/notes.txt", "nothing here");
  Ran ran = run_drk(dir, {"kernelbench", "import", dir.file("empty"), "--into", dir.file("imported")});
  DRK_CHECK(ran.exit_code == 1);
  DRK_CHECK(ran.output.find("holds no KernelBench problem") != std::string::npos);
  DRK_CHECK(ran.output.find("levelN/ID_Name.py") != std::string::npos);

  Ran no_python = run_drk(dir, {"kernelbench", "import", dir.write("level1/1_ReLU.py", kRelu), "--into",
                            dir.file("imported"), "--python", dir.file("no-such-python")});
  DRK_CHECK(no_python.exit_code == 1);
  DRK_CHECK(no_python.output.find("apt-get install python3-torch") != std::string::npos);
}
