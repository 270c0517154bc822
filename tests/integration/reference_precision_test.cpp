// An imprecise reference: a KernelBench problem whose float32 reference misses the exact answer by
// more than the float32 tolerance (a variance as E[x^2] - E[x]^2 of data far from zero). A
// candidate closer to the exact answer than the reference is correct, at a widened atol that the
// result and a Verifier warning carry; a candidate off by more than twice the reference's own
// error is still wrong; a precise reference is judged at the task's own tolerance.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/ran_program.h"
#include "tests/support/verdict_json.h"
#include "tests/support/run_dir.h"

using drk::testing::Ran;
using drk::testing::RunDir;

namespace {

Ran run_drk(const RunDir& dir, const std::vector<std::string>& arguments) {
  return drk::testing::run_program(dir, DRK_BINARY, arguments);
}

// A module `name` whose forward(x) returns `formula`.
std::string module_source(const std::string& name, const std::string& formula) {
  return R"(import torch
import torch.nn as nn


class )" + name + R"((nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return )" + formula + "\n";
}

// The reference's float32 error against float64 is about 3e-3 at these inputs; the tolerance is 2e-4.
std::string variance_problem(const std::string& formula) {
  return module_source("Model", formula) + R"(

def get_inputs():
    return [torch.randn(64, 4096) + 100]


def get_init_inputs():
    return []
)";
}

std::string variance_candidate(const std::string& scale) {
  return module_source("ModelNew", "torch.var(x, 1, unbiased=False) * " + scale);
}

nlohmann::json evaluate(const RunDir& dir, const std::string& task, const std::string& candidate) {
  Ran ran = run_drk(dir, {"eval", "--task", task, "--candidate", candidate, "--kernelbench-dir", dir.file("records"),
                          "--trials", "2", "--budget-ms", "100", "--json"});
  return drk::testing::verdict_json(ran);
}

bool warns(const nlohmann::json& verdict, const std::string& code) {
  for (const auto& warning : verdict.value("warnings", nlohmann::json::array()))
    if (warning.value("code", "") == code) return true;
  return false;
}

}  // namespace

DRK_TEST_CASE("a candidate more precise than an imprecise reference is correct at a widened atol, a wrong one is not") {
  RunDir dir;
  dir.write("KernelBench/level1/1_NaiveVariance.py", variance_problem("(x * x).mean(1) - x.mean(1) ** 2"));
  dir.write("KernelBench/level1/2_Variance.py", variance_problem("torch.var(x, 1, unbiased=False)"));
  Ran imported = run_drk(dir, {"kernelbench", "import", dir.file("KernelBench"), "--into", dir.file("records")});
  DRK_REQUIRE_MESSAGE(imported.exit_code == 0, imported.output);

  const std::string precise = dir.write("variance_new.py", variance_candidate("1.0"));
  auto widened = evaluate(dir, "kernelbench/level1/1_NaiveVariance", precise);
  DRK_CHECK_MESSAGE(widened["result"].value("correct", false), widened.dump());
  DRK_CHECK(widened.value("honest", false));
  const double atol = widened["result"].value("widenedAtol", 0.0);
  DRK_CHECK_MESSAGE(atol > 1e-3, widened.dump());
  DRK_CHECK_MESSAGE(atol < 2e-2, widened.dump());
  DRK_CHECK_MESSAGE(warns(widened, "tolerance.widened"), widened.dump());

  // 5 % off: farther from the exact answer than twice the reference's own error.
  const std::string off = dir.write("variance_off.py", variance_candidate("1.05"));
  auto wrong = evaluate(dir, "kernelbench/level1/1_NaiveVariance", off);
  DRK_CHECK_FALSE(wrong["result"].value("correct", true));
  DRK_CHECK_MESSAGE(wrong["result"].value("widenedAtol", 0.0) == doctest::Approx(atol).epsilon(0.5), wrong.dump());

  // A precise reference keeps the task's own tolerance: the same 5 % is wrong, and nothing is widened.
  auto exact_reference = evaluate(dir, "kernelbench/level1/2_Variance", off);
  DRK_CHECK_FALSE(exact_reference["result"].value("correct", true));
  DRK_CHECK(exact_reference["result"].value("widenedAtol", 0.0) == 0.0);
  auto honest = evaluate(dir, "kernelbench/level1/2_Variance", precise);
  DRK_CHECK_MESSAGE(honest["result"].value("correct", false), honest.dump());
  DRK_CHECK(honest["result"].value("widenedAtol", 0.0) == 0.0);
  DRK_CHECK_FALSE(warns(honest, "tolerance.widened"));
}
