// PythonReference under threads: several engines of one process (`drk bench kernelbench --jobs N`)
// share the embedded interpreter and torch's one generator per device. Each draw and each
// construction must see only its own seed, although torch lets go of the interpreter's lock
// inside its operators. Needs a Python with torch (Debian's python3-torch).
#include "actors/evaluator/python/python_reference.h"

#include <thread>
#include <vector>

#include "actors/evaluator/engine/python_evaluation.h"
#include "tests/doctest_drk.h"

using namespace drk;
using namespace drk::evaluator;

namespace {

// Inputs large enough that drawing them takes a while, and a model whose weights come from the seed.
constexpr const char* kLinearProblem = R"(import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.linear = nn.Linear(features, features)

    def forward(self, x):
        return self.linear(x)

def get_inputs():
    return [torch.randn(256, 1024)]

def get_init_inputs():
    return [1024]
)";

}  // namespace

DRK_TEST_CASE("references on several threads draw their own seeds' inputs and build their own seeds' weights") {
  auto started = start_evaluator_python();
  DRK_REQUIRE_MESSAGE(started, (started ? "" : started.error().message));
  constexpr int kThreads = 4, kDraws = 20;
  const kernels::Task task;
  std::vector<std::unique_ptr<PythonReference>> references;
  std::vector<std::vector<at::Tensor>> expected;
  std::vector<std::string> expected_parameters;
  for (int t = 0; t < kThreads; ++t) {
    auto reference = PythonReference::create(kLinearProblem, "linear.py", kernels::DeviceKind::cpu, 100 + t);
    DRK_REQUIRE_MESSAGE(reference, (reference ? "" : reference.error().message));
    expected.push_back((*reference)->draw(task, kernels::DeviceKind::cpu, 7 + t));
    expected_parameters.push_back((*reference)->parameters_json());
    references.push_back(std::move(*reference));
  }
  std::vector<int> wrong_draws(kThreads, 0), wrong_weights(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int d = 0; d < kDraws; ++d) {
        const auto drawn = references[t]->draw(task, kernels::DeviceKind::cpu, 7 + t);
        if (drawn.size() != 1 || !drawn[0].equal(expected[t][0])) ++wrong_draws[t];
        auto again = PythonReference::create(kLinearProblem, "linear.py", kernels::DeviceKind::cpu, 100 + t);
        if (!again || (*again)->parameters_json() != expected_parameters[t]) ++wrong_weights[t];
      }
    });
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    DRK_CHECK_MESSAGE(wrong_draws[t] == 0, "thread " << t);
    DRK_CHECK_MESSAGE(wrong_weights[t] == 0, "thread " << t);
  }
}
