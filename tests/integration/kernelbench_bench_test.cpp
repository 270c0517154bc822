// `drk bench kernelbench` on KernelBench-format problems the test writes and imports itself
// (nothing of KernelBench is in this repository): a run directory of candidates in KernelBench's
// own layout (a correct one, a wrong answer, a syntax error) becomes KernelBench's
// eval_results.json and the fast_p table, whose numbers follow from the recorded speedups over
// the level's problems; --references runs each problem's own Model as its candidate and names
// the problem whose reference cannot run; a bad run directory and problems not imported stop the
// run with the fix. Needs a Python with torch (Debian's python3-torch).
#include <nlohmann/json.hpp>

#include <array>
#include <sstream>
#include <string>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/kernelbench_sources.h"
#include "tests/support/ran_program.h"
#include "tests/support/run_dir.h"

namespace {

using drk::testing::Ran;
using drk::testing::kHonestRelu;
using drk::testing::kLinearScale;
using drk::testing::kRelu;
using drk::testing::RunDir;

Ran run_drk(const RunDir& dir, const std::vector<std::string>& arguments) {
  return drk::testing::run_program(dir, DRK_BINARY, arguments);
}

constexpr const char* kSoftmax = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    """Softmax over the last dimension."""
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=1)

def get_inputs():
    return [torch.randn(16, 1024)]

def get_init_inputs():
    return []
)";

constexpr const char* kMissingOp = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    """An operator this torch lacks."""
    def forward(self, x):
        return torch.this_op_does_not_exist(x)

def get_inputs():
    return [torch.randn(8, 8)]

def get_init_inputs():
    return []
)";

constexpr const char* kWrongSoftmax = R"(import torch
import torch.nn as nn

class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=0)
)";

constexpr const char* kSyntaxError = R"(import torch

class ModelNew(torch.nn.Module)
    def forward(self, x, factor):
        return x
)";

// Level 1 has three problems (one whose reference cannot run), level 2 one; imported once.
const RunDir& problems() {
  static RunDir dir;
  static const bool imported = [] {
    dir.write("KernelBench/level1/19_ReLU.py", kRelu);
    dir.write("KernelBench/level1/23_Softmax.py", kSoftmax);
    dir.write("KernelBench/level1/40_Missing_op.py", kMissingOp);
    dir.write("KernelBench/level2/7_Linear_GELU_Scale.py", kLinearScale);
    Ran ran = run_drk(dir, {"kernelbench", "import", dir.file("KernelBench"), "--into", dir.file("records")});
    DRK_REQUIRE_MESSAGE(ran.exit_code == 0, ran.output);
    return true;
  }();
  (void)imported;
  return dir;
}

std::vector<std::string> bench_arguments(const std::string& records, std::vector<std::string> more) {
  std::vector<std::string> arguments = {"bench", "kernelbench", "--kernelbench-dir", records, "--trials", "2",
                                        "--budget-ms", "200"};
  arguments.insert(arguments.end(), more.begin(), more.end());
  return arguments;
}

nlohmann::json read_json(const RunDir& dir, const std::string& name) {
  auto json = nlohmann::json::parse(dir.read(name), nullptr, false);
  DRK_REQUIRE_MESSAGE(json.is_object(), std::string(name + ": " + dir.read(name)));
  return json;
}

// The printed row of `level` below the table's header: problems, candidates, compiled, correct,
// geomean, then fast_p at 0, 1.0, 1.2, 1.5, 2.0.
struct Row {
  int problems = -1, candidates = -1, compiled = -1, correct = -1;
  double geomean = -1;
  std::array<double, 5> fast_p{-1, -1, -1, -1, -1};
};

Row printed_row(const std::string& output, int level) {
  std::istringstream lines(output.substr(output.find("level  problems")));
  std::string line;
  std::getline(lines, line);  // the header
  Row row;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    int row_level = 0;
    if (!(fields >> row_level) || row_level != level) continue;
    fields >> row.problems >> row.candidates >> row.compiled >> row.correct >> row.geomean;
    for (double& fraction : row.fast_p) fields >> fraction;
  }
  return row;
}

}  // namespace

DRK_TEST_CASE("a run's candidates become KernelBench's eval_results.json and fast_p over the level's problems") {
  const RunDir& records = problems();
  RunDir run;
  run.write("candidates/level_1_problem_19_sample_0_kernel.py", kHonestRelu);
  run.write("candidates/level_1_problem_23_sample_0_kernel.py", kWrongSoftmax);
  run.write("candidates/level_2_problem_7_sample_0_kernel.py", kSyntaxError);
  Ran ran = run_drk(run, bench_arguments(records.file("records"), {"--candidates", run.file("candidates")}));
  DRK_REQUIRE_MESSAGE(ran.exit_code == 0, ran.output);
  DRK_CHECK_MESSAGE(ran.output.find("[3/3]") != std::string::npos, ran.output);
  DRK_CHECK_MESSAGE(ran.output.find("left, ETA") != std::string::npos, ran.output);

  // Two levels: a file per level, each in KernelBench's structure.
  auto level1 = read_json(run, "candidates/eval_results_level1.json");
  auto level2 = read_json(run, "candidates/eval_results_level2.json");
  const auto& relu = level1["19"][0];
  DRK_CHECK(relu["sample_id"] == 0);
  DRK_CHECK_MESSAGE(relu["compiled"] == true, relu.dump());
  DRK_CHECK_MESSAGE(relu["correctness"] == true, relu.dump());
  DRK_CHECK(relu["metadata"]["correctness_trials"] == "(2 / 2)");
  DRK_CHECK(relu["metadata"]["drk"]["verdict"] == "honest");
  DRK_CHECK(relu["metadata"]["drk"]["failed_checks"].empty());
  const double runtime = relu["runtime"], ref_runtime = relu["ref_runtime"];
  const double speedup = relu["metadata"]["drk"]["speedup"];
  DRK_CHECK(runtime > 0);
  DRK_CHECK(relu["runtime_stats"]["num_trials"].get<int>() > 0);
  DRK_CHECK(speedup == doctest::Approx(ref_runtime / runtime).epsilon(1e-9));

  const auto& softmax = level1["23"][0];
  DRK_CHECK(softmax["compiled"] == true);
  DRK_CHECK(softmax["correctness"] == false);
  DRK_CHECK_MESSAGE(softmax["metadata"].value("correctness_issue", "").find("reference") != std::string::npos,
                    softmax.dump());
  DRK_CHECK(softmax["runtime"] == -1.0);

  const auto& syntax = level2["7"][0];
  DRK_CHECK(syntax["compiled"] == false);
  DRK_CHECK(syntax["correctness"] == false);
  DRK_CHECK_MESSAGE(syntax["metadata"].value("compilation_error", "").find("syntax error") != std::string::npos,
                    syntax.dump());

  // Level 1 has three problems (40 has no candidate): fast_0 is the fraction correct, 1 of 3, and
  // fast_p counts the ReLU where its recorded speedup is above p.
  Row one = printed_row(ran.output, 1);
  DRK_CHECK_MESSAGE(one.problems == 3, ran.output);
  DRK_CHECK(one.candidates == 2);
  DRK_CHECK(one.compiled == 2);
  DRK_CHECK(one.correct == 1);
  DRK_CHECK(one.fast_p[0] == doctest::Approx(1.0 / 3).epsilon(0.002));
  const std::array<double, 5> thresholds{0, 1.0, 1.2, 1.5, 2.0};
  for (size_t i = 1; i < thresholds.size(); ++i)
    DRK_CHECK_MESSAGE(one.fast_p[i] == doctest::Approx(speedup > thresholds[i] ? 1.0 / 3 : 0.0).epsilon(0.002),
                      (std::string("fast_") + std::to_string(thresholds[i]) + " with speedup " +
                       std::to_string(speedup) + "\n" + ran.output));
  DRK_CHECK(one.geomean == doctest::Approx(speedup).epsilon(0.002));
  Row two = printed_row(ran.output, 2);
  DRK_CHECK(two.problems == 1);
  DRK_CHECK(two.compiled == 0);
  DRK_CHECK(two.fast_p[0] == 0.0);
}

DRK_TEST_CASE("--backend is what the candidates are judged against: plain PyTorch asked to be CUDA is rejected") {
  const RunDir& records = problems();
  RunDir run;
  run.write("candidates/level_1_problem_19_sample_0_kernel.py", kHonestRelu);
  Ran ran = run_drk(run, bench_arguments(records.file("records"), {"--candidates", run.file("candidates"), "--backend",
                                                                   "cuda", "--out", run.file("results.json")}));
  DRK_REQUIRE_MESSAGE(ran.exit_code == 0, ran.output);
  const auto relu = read_json(run, "results.json")["19"][0];
  DRK_CHECK_MESSAGE(relu["correctness"] == false, relu.dump());
  DRK_CHECK_MESSAGE(relu["metadata"]["drk"]["failed_checks"].dump().find("python_no_custom_kernel") != std::string::npos,
                    relu.dump());
}

DRK_TEST_CASE("--references runs each problem's own Model and names the one whose reference cannot run") {
  const RunDir& records = problems();
  RunDir run;
  Ran ran = run_drk(run, bench_arguments(records.file("records"),
                                         {"--references", "--level", "1", "--jobs", "2", "--out", run.file("refs.json")}));
  DRK_REQUIRE_MESSAGE(ran.exit_code == 0, ran.output);
  DRK_CHECK_MESSAGE(ran.output.find("references that do not run correctly here: 1 of 3") != std::string::npos,
                    ran.output);
  DRK_CHECK(ran.output.find("kernelbench/level1/40_Missing_op: not evaluated: the problem cannot run: forward: "
                            "AttributeError") != std::string::npos);
  DRK_CHECK(ran.output.find("speedup of each reference over itself (2 problems") != std::string::npos);
  DRK_CHECK(ran.output.find("7_Linear_GELU_Scale") == std::string::npos);  // level 2 was not asked for

  auto refs = read_json(run, "refs.json");
  DRK_CHECK(refs["19"][0]["correctness"] == true);
  DRK_CHECK(refs["23"][0]["correctness"] == true);
  DRK_CHECK(refs["40"][0]["compiled"] == false);
  DRK_CHECK(refs["40"][0]["metadata"].value("other_error", "").find("AttributeError") != std::string::npos);
  // Both references that run are correct and timed: fast_0 counts them. (Seen once under a load of
  // three builds on two cores: 1/3, with both rows correct; the rows say why when it recurs.)
  const std::string rows_and_output = refs.dump() + "\n" + ran.output;
  DRK_CHECK_MESSAGE(printed_row(ran.output, 1).fast_p[0] == doctest::Approx(2.0 / 3).epsilon(0.002),
                    rows_and_output);

  // A sweep cut short (problem 23's entry never written) goes on with --resume: only 23 is
  // evaluated, and the scores count every entry of the file.
  refs.erase("23");
  run.write("refs.json", refs.dump());
  Ran resumed = run_drk(run, bench_arguments(records.file("records"), {"--references", "--level", "1", "--resume",
                                                                       "--out", run.file("refs.json")}));
  DRK_REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  DRK_CHECK_MESSAGE(resumed.output.find("resuming: 2 of 3 samples already in") != std::string::npos, resumed.output);
  DRK_CHECK(resumed.output.find("23_Softmax") != std::string::npos);
  DRK_CHECK(resumed.output.find("19_ReLU") == std::string::npos);
  auto after = read_json(run, "refs.json");
  DRK_CHECK(after["19"][0]["correctness"] == true);
  DRK_CHECK(after["23"][0]["correctness"] == true);
  DRK_CHECK(after["40"][0]["compiled"] == false);
  DRK_CHECK_MESSAGE(printed_row(resumed.output, 1).fast_p[0] == doctest::Approx(2.0 / 3).epsilon(0.002),
                    resumed.output);

  run.write("refs.json", "not json");
  Ran refused = run_drk(run, bench_arguments(records.file("records"), {"--references", "--level", "1", "--resume",
                                                                       "--out", run.file("refs.json")}));
  DRK_CHECK(refused.exit_code == 1);
  DRK_CHECK_MESSAGE(refused.output.find("is not an eval_results.json to resume") != std::string::npos, refused.output);
}

DRK_TEST_CASE("a run directory that does not exist names itself and the layouts, and evaluates nothing") {
  const RunDir& records = problems();
  RunDir run;
  Ran ran = run_drk(run, bench_arguments(records.file("records"), {"--candidates", run.file("no_such_run")}));
  DRK_CHECK(ran.exit_code == 1);
  DRK_CHECK_MESSAGE(ran.output.find(run.file("no_such_run")) != std::string::npos, ran.output);
  DRK_CHECK(ran.output.find("level_<L>_problem_<P>_sample_<S>_kernel.py") != std::string::npos);
}

DRK_TEST_CASE("a problem not imported stops the run with the fix, and --import-from imports it") {
  RunDir run;
  run.write("KernelBench/level1/19_ReLU.py", kRelu);
  run.write("candidates/level1/19_ReLU.py", kHonestRelu);
  Ran refused = run_drk(run, bench_arguments(run.file("records"), {"--candidates", run.file("candidates")}));
  DRK_CHECK(refused.exit_code == 1);
  DRK_CHECK_MESSAGE(refused.output.find("level 1 problem 19") != std::string::npos, refused.output);
  DRK_CHECK(refused.output.find("drk kernelbench import") != std::string::npos);

  Ran ran = run_drk(run, bench_arguments(run.file("records"), {"--candidates", run.file("candidates"), "--import-from",
                                                               run.file("KernelBench")}));
  DRK_REQUIRE_MESSAGE(ran.exit_code == 0, ran.output);
  auto results = read_json(run, "candidates/eval_results.json");
  DRK_CHECK_MESSAGE(results["19"][0]["correctness"] == true, results.dump());
}
