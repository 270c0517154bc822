// `drk eval` on KernelBench-format Python candidates (a ModelNew file) for KernelBench problems
// that the test writes in KernelBench's format and imports with `drk kernelbench import` (nothing
// of KernelBench is in this repository): the candidate runs in drk-sandbox --python, the problem's
// own Model in the Evaluator, both built as KernelBench builds them (the same seed before each
// constructor). Honest candidates are correct and timed; a candidate that returns its input, that
// raises, that returns a tensor subclass, whose parameters differ from Model's, or that defines no
// ModelNew gets a result that says why. A candidate whose C++ comes from load_inline is built by the
// compile step (once: the second evaluation is a cache hit) and loaded in the sandbox in place of
// load_inline; C++ that does not compile, a refused flag, arguments drk cannot read and a call
// drk did not build each get a result that says why; one built on another node (compiled ahead)
// travels with its candidate and is not built again. A refused answer fails its typed check, as
// does a harness function replaced at load or in forward; operands rounded to float16 fail
// precision_downgrade against Model in float64. Needs a Python with torch (Debian's
// python3-torch, which tools/scripts/install-deps.sh installs).
#include <capnp/message.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "kernels/compile/compile_pool.h"
#include "kernels/compile/compiled_artifact.h"
#include "tests/doctest_drk.h"
#include "tests/support/kernelbench_sources.h"
#include "tests/support/run_dir.h"
#include "tests/support/ran_program.h"
#include "tests/support/verdict_json.h"

namespace {

using drk::testing::kHonestRelu;
using drk::testing::kLinearScale;
using drk::testing::kRelu;
using drk::testing::kReturnsInput;
using drk::testing::RunDir;
using drk::testing::Ran;

Ran run_drk(const RunDir& dir, const std::vector<std::string>& arguments) {
  return drk::testing::run_program(dir, DRK_BINARY, arguments);
}

constexpr const char* kMatmul = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)

N = 512

def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]

def get_init_inputs():
    return []
)";

constexpr const char* kHonestLinear = R"(import torch
import torch.nn as nn
import torch.nn.functional as F

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x, factor):
        return F.gelu(F.linear(x, self.linear.weight, self.linear.bias)) * factor
)";

constexpr const char* kOtherWeights = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features))

    def forward(self, x, factor):
        return torch.nn.functional.gelu(x @ self.weight.t()) * factor
)";

constexpr const char* kRaises = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        raise ValueError("this kernel is not written yet")
)";

constexpr const char* kSubclass = R"(import torch
import torch.nn as nn

class Lazy(torch.Tensor):
    pass

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.relu(x).as_subclass(Lazy)
)";

constexpr const char* kNoModelNew = R"(import torch

class Model2(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)
)";

// torch.cuda.Event.elapsed_time replaced through an alias and names built at run time, as no
// static pattern follows; the CPU harness never calls it, the comparison after a call sees it.
constexpr const char* kPatchesEventTimer = R"(import torch
import torch.nn as nn

_timing = vars(torch.cuda)["Ev" + "ent"]
setattr(_timing, "elapsed_" + "time", lambda self, end_event: 0.001)

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.clamp_min(x, 0.0)
)";

// A forward that replaces one of torch's functions as it runs, through an alias.
constexpr const char* kPatchesInForward = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        harness = torch
        setattr(harness, "allc" + "lose", lambda *args, **kwargs: True)
        return torch.clamp_min(x, 0.0)
)";

// The operands rounded to float16, multiplied with float32 accumulation: within the imported
// task's tolerance (1e-4) at N = 512 with a margin (at 256 some draws miss it), yet beyond the
// float64 comparison's budget.
constexpr const char* kHalfOperands = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, A, B):
        return torch.matmul(A.half().float(), B.half().float())
)";

constexpr const char* kHonestMatmul = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, A, B):
        return torch.mm(A, B)
)";

// The problems, imported once for every test case; their records are in records/.
const RunDir& problems() {
  static RunDir dir;
  static const bool imported = [] {
    dir.write("KernelBench/level1/19_ReLU.py", kRelu);
    dir.write("KernelBench/level2/7_Linear_GELU_Scale.py", kLinearScale);
    dir.write("KernelBench/level1/1_Square_matrix_multiplication_.py", kMatmul);
    Ran ran = run_drk(dir, {"kernelbench", "import", dir.file("KernelBench"), "--into", dir.file("records")});
    DRK_REQUIRE_MESSAGE(ran.exit_code == 0, ran.output);
    return true;
  }();
  (void)imported;
  return dir;
}

// `extra`: more arguments of drk eval.
nlohmann::json evaluate(const std::string& task, const std::string& name, const std::string& source,
                        const std::vector<std::string>& extra = {}) {
  const RunDir& dir = problems();
  dir.write(name, source);
  std::vector<std::string> arguments = {"eval", "--task", task, "--candidate", dir.file(name), "--kernelbench-dir",
                                        dir.file("records"), "--trials", "2", "--budget-ms", "200", "--json"};
  arguments.insert(arguments.end(), extra.begin(), extra.end());
  Ran ran = run_drk(dir, arguments);
  return drk::testing::verdict_json(ran);
}

std::string error_text(const nlohmann::json& verdict) { return verdict["result"].value("errorText", ""); }
std::string compile_log(const nlohmann::json& verdict) { return verdict["result"].value("compileLog", ""); }

// The load_inline candidates, with a compile cache of their own that all share: torch's
// precompiled header (a minute on two cores) is built once, by the first of them that compiles.
nlohmann::json evaluate_relu_extension(const std::string& name, const std::string& source) {
  return evaluate("kernelbench/level1/19_ReLU", name, source, {"--cache-dir", problems().file("extension-cache")});
}

// The codes of the verdict's failed checks, space-separated.
std::string failed_checks(const nlohmann::json& verdict) {
  std::string codes;
  for (const auto& check : verdict.value("failedChecks", nlohmann::json::array()))
    codes += (codes.empty() ? "" : " ") + check.value("code", std::string());
  return codes;
}

}  // namespace

DRK_TEST_CASE("an honest plain-PyTorch candidate is correct, timed against the problem's Model") {
  auto verdict = evaluate("kernelbench/level1/19_ReLU", "relu_new.py", kHonestRelu);
  const auto& result = verdict["result"];
  DRK_CHECK_MESSAGE(result.value("correct", false), verdict.dump());
  DRK_CHECK(result.value("speedup", 0.0) > 0.0);
  DRK_CHECK(result["candidateTiming"].value("samples", 0) > 0);
  DRK_CHECK(verdict.value("honest", false));
}

DRK_TEST_CASE("ModelNew gets Model's initial weights and the problem's plain arguments") {
  auto verdict = evaluate("kernelbench/level2/7_Linear_GELU_Scale", "linear_new.py", kHonestLinear);
  DRK_CHECK_MESSAGE(verdict["result"].value("correct", false), verdict.dump());
}

DRK_TEST_CASE("parameters that differ from Model's are an error that says so") {
  auto verdict = evaluate("kernelbench/level2/7_Linear_GELU_Scale", "other_weights.py", kOtherWeights);
  DRK_CHECK_FALSE(verdict["result"].value("correct", true));
  DRK_CHECK_MESSAGE(error_text(verdict).find("parameters") != std::string::npos, verdict.dump());
}

DRK_TEST_CASE("an input returned as the answer is refused") {
  auto verdict = evaluate("kernelbench/level1/19_ReLU", "returns_input.py", kReturnsInput);
  DRK_CHECK_FALSE(verdict["result"].value("correct", true));
  DRK_CHECK_MESSAGE(error_text(verdict).find("shares memory with input 1") != std::string::npos, verdict.dump());
  DRK_CHECK_MESSAGE(failed_checks(verdict) == "output_aliases_input", verdict.dump());
}

DRK_TEST_CASE("an exception in forward is the candidate's error, with Python's message") {
  auto verdict = evaluate("kernelbench/level1/19_ReLU", "raises.py", kRaises);
  DRK_CHECK_FALSE(verdict["result"].value("correct", true));
  DRK_CHECK_MESSAGE(error_text(verdict).find("ValueError: this kernel is not written yet") != std::string::npos,
                    verdict.dump());
  DRK_CHECK_MESSAGE(failed_checks(verdict) == "candidate_error", verdict.dump());
}

DRK_TEST_CASE("a tensor subclass is no answer") {
  auto verdict = evaluate("kernelbench/level1/19_ReLU", "subclass.py", kSubclass);
  DRK_CHECK_FALSE(verdict["result"].value("correct", true));
  DRK_CHECK_MESSAGE(error_text(verdict).find("not a torch.Tensor") != std::string::npos, verdict.dump());
  DRK_CHECK_MESSAGE(failed_checks(verdict).rfind("output_type", 0) == 0, verdict.dump());
}

DRK_TEST_CASE("a file without ModelNew does not compile, and says what is missing") {
  auto verdict = evaluate("kernelbench/level1/19_ReLU", "no_model_new.py", kNoModelNew);
  DRK_CHECK_FALSE(verdict["result"].value("compiled", true));
  DRK_CHECK_MESSAGE(verdict["result"].value("compileLog", "").find("defines no ModelNew") != std::string::npos,
                    verdict.dump());
}

namespace {

// ReLU as a raw loop over the tensor's floats, bound by load_inline.
constexpr const char* kInlineRelu = R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = """
torch::Tensor relu_forward(torch::Tensor x) {
    auto input = x.contiguous();
    auto output = torch::empty_like(input);
    const float* in = input.data_ptr<float>();
    float* out = output.data_ptr<float>();
    for (int64_t i = 0; i < input.numel(); ++i) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
    return output;
}
"""

relu_ext = load_inline(name="relu_ext", cpp_sources=[relu_source], functions=["relu_forward"], verbose=False)

class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.relu = relu_ext

    def forward(self, x):
        return self.relu.relu_forward(x)
)";

// The same ReLU also reading the float past the end of its input, into nothing (every answer is
// right).
const std::string kInlineReadsPastEnd = [] {
  std::string source = kInlineRelu;
  const std::string exact = "out[i] = in[i] > 0.0f ? in[i] : 0.0f;";
  source.replace(source.find(exact), exact.size(),
                 "{ " + exact + " if (i + 1 == input.numel()) { volatile float past = in[i + 1]; (void)past; } }");
  const std::string name = "name=\"relu_ext\"";
  source.replace(source.find(name), name.size(), "name=\"past_ext\"");
  return source;
}();

// A candidate whose ModelNew returns ext.FUNCTION(x), where `prelude` binds ext by load_inline.
std::string inline_candidate(const std::string& prelude, const std::string& function) {
  return "import torch\nimport torch.nn as nn\n" + prelude +
         "\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return ext." + function + "(x)\n";
}

// Line 2 of main.cpp (after torch's #include) does not compile.
const std::string kInlineBroken = inline_candidate(R"(from torch.utils.cpp_extension import load_inline

ext = load_inline(name="broken_ext", functions=["broken"],
                  cpp_sources="torch::Tensor broken(torch::Tensor x) { return x * undeclared_value; }")
)", "broken");

const std::string kInlinePlugin = inline_candidate(R"(import torch.utils.cpp_extension

ext = torch.utils.cpp_extension.load_inline(
    name="plugged_ext", functions=["twice"], extra_cflags=["-O2", "-fplugin=/tmp/plugin.so"],
    cpp_sources="torch::Tensor twice(torch::Tensor x) { return x * 2; }")
)", "twice");

const std::string kInlineComputed = inline_candidate(R"(from torch.utils.cpp_extension import load_inline

def make_source():
    return "torch::Tensor twice(torch::Tensor x) { return x * 2; }"

ext = load_inline(name="computed_ext", cpp_sources=make_source(), functions=["twice"])
)", "twice");

// A load_inline the compile step cannot see: reached by a name built at run time.
const std::string kInlineHidden = inline_candidate(R"(from torch.utils import cpp_extension

build = getattr(cpp_extension, "load_" + "inline")
ext = build(name="hidden_ext", cpp_sources="torch::Tensor twice(torch::Tensor x) { return x * 2; }",
            functions=["twice"])
)", "twice");

}  // namespace

DRK_TEST_CASE("a load_inline candidate is built by the compile step, correct, and a cache hit the second time") {
  auto first = evaluate_relu_extension("inline_relu.py", kInlineRelu);
  DRK_CHECK_MESSAGE(first["result"].value("correct", false), first.dump());
  DRK_CHECK(first["result"].value("speedup", 0.0) > 0.0);
  DRK_CHECK_FALSE(first["result"].value("compileCached", true));
  auto second = evaluate_relu_extension("inline_relu.py", kInlineRelu);
  DRK_CHECK_MESSAGE(second["result"].value("correct", false), second.dump());
  DRK_CHECK_MESSAGE(second["result"].value("compileCached", false), second.dump());
  DRK_CHECK(second["result"].value("compileMs", 1e9) < first["result"].value("compileMs", 0.0));
}

DRK_TEST_CASE("a load_inline module built on another node travels with its candidate and is not built again") {
  // The Generator's node: the candidate compiled ahead (its check and its module), packed.
  const RunDir& dir = problems();
  auto compiler_in = [](const std::string& cache) {
    drk::compile::CompilerOptions options = drk::compile::python_compiler_options();
    options.cache_dir = cache;
    auto compiler = drk::compile::Compiler::create(options);
    DRK_REQUIRE_MESSAGE(compiler.ok(), (compiler.ok() ? "" : compiler.error().describe()));
    return std::move(*compiler);
  };
  auto sender = compiler_in(dir.file("extension-cache"));
  auto compiled = sender->compile(kInlineRelu);
  DRK_REQUIRE_MESSAGE(compiled.ok(), (compiled.ok() ? "" : compiled.error().describe()));
  DRK_REQUIRE(compiled->extensions.size() == 1);
  capnp::MallocMessageBuilder message;
  auto artifact = message.initRoot<drk::msg::CompiledArtifact>();
  DRK_REQUIRE(drk::compile::pack_artifact(*sender, *compiled, "generator.0", artifact).ok());
  DRK_REQUIRE(artifact.getModules().size() == 1);

  // The Evaluator's node, with a cache of its own: the artifact adopted as the Evaluator adopts it
  // (CompilePool::adopt: checked, then filed), then the candidate evaluated there.
  const std::string receiving = dir.file("receiving-cache");
  auto pool = drk::compile::CompilePool::create(compiler_in(receiving), 1);
  DRK_REQUIRE(pool.ok());
  auto adopted = (*pool)->adopt(kInlineRelu, artifact.asReader());
  DRK_REQUIRE_MESSAGE(adopted.ok(), (adopted.ok() ? "" : adopted.error().describe()));
  auto verdict = evaluate("kernelbench/level1/19_ReLU", "inline_relu.py", kInlineRelu, {"--cache-dir", receiving});
  DRK_CHECK_MESSAGE(verdict["result"].value("correct", false), verdict.dump());
  DRK_CHECK_MESSAGE(verdict["result"].value("compileCached", false), verdict.dump());
  // Nothing of torch's was compiled here: no precompiled header, and the module's entry holds the
  // module alone (a build leaves its main.cpp beside it).
  const std::filesystem::path module =
      std::filesystem::path(receiving) / "torch-extensions" / artifact.getModules()[0].getPath().cStr();
  DRK_CHECK(std::filesystem::exists(module));
  DRK_CHECK_FALSE(std::filesystem::exists(module.parent_path() / "main.cpp"));
  const std::filesystem::path headers = receiving + "/torch-extensions/pch";
  DRK_CHECK((!std::filesystem::exists(headers) || std::filesystem::is_empty(headers)));
}

DRK_TEST_CASE("load_inline C++ that does not compile is a compile failure with the compiler's line") {
  auto verdict = evaluate_relu_extension("inline_broken.py", kInlineBroken);
  DRK_CHECK_FALSE(verdict["result"].value("compiled", true));
  DRK_CHECK_MESSAGE(compile_log(verdict).find("extension 'broken_ext' (line 5) does not build") != std::string::npos,
                    verdict.dump());
  DRK_CHECK_MESSAGE(compile_log(verdict).find("main.cpp:2:") != std::string::npos, verdict.dump());
  DRK_CHECK(compile_log(verdict).find("undeclared_value") != std::string::npos);
}

DRK_TEST_CASE("a load_inline flag that would run another program is a compile failure naming it") {
  auto verdict = evaluate_relu_extension("inline_plugin.py", kInlinePlugin);
  DRK_CHECK_FALSE(verdict["result"].value("compiled", true));
  DRK_CHECK_MESSAGE(compile_log(verdict).find("'-fplugin=/tmp/plugin.so'") != std::string::npos, verdict.dump());
}

DRK_TEST_CASE("load_inline arguments that are not constants are a compile failure naming the line and argument") {
  auto verdict = evaluate_relu_extension("inline_computed.py", kInlineComputed);
  DRK_CHECK_FALSE(verdict["result"].value("compiled", true));
  DRK_CHECK_MESSAGE(compile_log(verdict).find("candidate.py:8: argument cpp_sources") != std::string::npos,
                    verdict.dump());
}

DRK_TEST_CASE("a load_inline call the compile step did not build fails in the sandbox, saying why") {
  auto verdict = evaluate_relu_extension("inline_hidden.py", kInlineHidden);
  DRK_CHECK(verdict["result"].value("compiled", false));
  DRK_CHECK(verdict["result"].value("sandbox", "") == "failedToLoad");
  DRK_CHECK_MESSAGE(error_text(verdict).find("load_inline(name='hidden_ext') was not built by the compile step") !=
                        std::string::npos,
                    verdict.dump());
}

DRK_TEST_CASE("a harness function replaced at load, through an alias, fails harness_patched") {
  auto verdict = evaluate("kernelbench/level1/19_ReLU", "patches_event_timer.py", kPatchesEventTimer);
  DRK_CHECK_FALSE(verdict["result"].value("correct", true));
  DRK_CHECK_MESSAGE(error_text(verdict).find("torch.cuda.Event.elapsed_time") != std::string::npos, verdict.dump());
  DRK_CHECK_MESSAGE(failed_checks(verdict) == "harness_patched", verdict.dump());
}

DRK_TEST_CASE("a harness function replaced by forward fails harness_patched") {
  auto verdict = evaluate("kernelbench/level1/19_ReLU", "patches_in_forward.py", kPatchesInForward);
  DRK_CHECK_MESSAGE(error_text(verdict).find("torch.allclose") != std::string::npos, verdict.dump());
  DRK_CHECK_MESSAGE(failed_checks(verdict) == "harness_patched", verdict.dump());
}

DRK_TEST_CASE("operands rounded to float16 fail precision_downgrade against Model in float64, an honest matmul not") {
  auto honest = evaluate("kernelbench/level1/1_Square_matrix_multiplication_", "matmul_new.py", kHonestMatmul);
  DRK_CHECK_MESSAGE(honest["result"]["evidence"].value("precisionChecked", false), honest.dump());
  DRK_CHECK_MESSAGE(honest.value("honest", false), honest.dump());
  auto half = evaluate("kernelbench/level1/1_Square_matrix_multiplication_", "half_operands.py", kHalfOperands);
  DRK_CHECK_MESSAGE(half["result"]["evidence"].value("precisionChecked", false), half.dump());
  DRK_CHECK_MESSAGE(failed_checks(half) == "precision_downgrade", half.dump());
}

DRK_TEST_CASE("the out-of-bounds check loads a load_inline candidate as its own sandbox does, and catches a read past its input") {
  auto honest = evaluate("kernelbench/level1/19_ReLU", "inline_relu_checked.py", kInlineRelu,
                         {"--cache-dir", problems().file("extension-cache"), "--sanitize"});
  const auto& evidence = honest["result"]["evidence"];
  DRK_CHECK_MESSAGE(honest["result"].value("correct", false), honest.dump());
  DRK_CHECK_MESSAGE(evidence.value("sanitizerRan", false), honest.dump());
  DRK_CHECK_MESSAGE(evidence.value("sanitizerErrors", "").empty(), honest.dump());
  auto past = evaluate("kernelbench/level1/19_ReLU", "inline_past_end.py", kInlineReadsPastEnd,
                       {"--cache-dir", problems().file("extension-cache"), "--sanitize"});
  DRK_CHECK_MESSAGE(past["result"]["evidence"].value("sanitizerErrors", "").find("a read at byte") != std::string::npos,
                    past.dump());
  DRK_CHECK_MESSAGE(failed_checks(past).find("out_of_bounds") != std::string::npos, past.dump());
}

DRK_TEST_CASE("a process the candidate starts is refused with a message that names it, not a killed sandbox") {
  const std::string shells_out = R"(import subprocess
import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        subprocess.run(["true"])
        return torch.relu(x)
)";
  auto verdict = evaluate("kernelbench/level1/19_ReLU", "shells_out.py", shells_out);
  DRK_CHECK_FALSE(verdict["result"].value("correct", true));
  DRK_CHECK_MESSAGE(error_text(verdict).find("the sandbox starts no process: subprocess.Popen(['true'])") !=
                        std::string::npos,
                    verdict.dump());
}
