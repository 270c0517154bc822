// The CUDA scheduling space on a real device: corner points of every family, rendered for
// catalog tasks, are evaluated by the Evaluator's engine (nvcc, drk-sandbox-cuda, the task's
// LibTorch reference at the scaled shapes) and must be correct, with the product's own kernels
// covering the GPU time unless the library does the product. Skips, saying why, without a
// usable GPU.
#include <cstdio>
#include <memory>
#include <string>

#include <capnp/message.h>

#include "actors/evaluator/cuda/cuda_device.h"
#include "actors/evaluator/evaluation.h"
#include "kernels/schedule/render.h"
#include "tests/doctest_drk.h"
#include "tests/policy/cuda_corners.h"
#include "tests/support/first_gpu.h"
#include "tests/support/test_engine.h"

namespace drk::schedule {
namespace {

bool gpu_missing() { return !testing::first_gpu_or_skip(); }

testing::TestEngine& shared_engine() {
  static testing::TestEngine engine("render-cuda-evaluation-test", [] {
    evaluator::EngineOptions options;
    options.device = kernels::DeviceKind::cuda;
    options.shapes = kernels::DeviceKind::cpu;
    options.trials = 3;
    options.seed = 97;
    options.timing_budget_ms = 100;
    options.call_timeout = std::chrono::milliseconds(4000);
    return options;
  }());
  return engine;
}

DRK_TEST_CASE("rendered CUDA corner points of every family are correct on the GPU [gpu]") {
  if (gpu_missing()) return;
  const auto problems = testing::catalog_problems(
      {"gelu", "softmax", "log_softmax", "layer_norm", "rms_norm", "gemm_multiply_leakyrelu", "matmul", "matvec"},
      msg::Device::CUDA);
  int evaluated = 0;
  for (const auto& problem : problems) {
    auto choices = testing::corner_choices(problem.family, Device::cuda);
    if (problem.family == Family::gemm) {
      Choice library = choices[1];
      library.options[cuda_gemm_knob::use_library] = 0;
      choices.push_back(library);
      library.options[cuda_gemm_knob::use_library] = 1;
      library.options[cuda_gemm_knob::epilogue] = 0;
      choices.push_back(library);
    }
    for (const auto& choice : choices) {
      DRK_INFO(problem.task << ": " << choice.describe());
      auto source = render(problem, choice);
      DRK_REQUIRE_MESSAGE(source.ok(), (source.ok() ? "" : source.error().describe()));
      capnp::MallocMessageBuilder message;
      auto out = message.initRoot<msg::EvalResult>();
      const evaluator::CandidateInput input{"render/" + problem.task + "/" + std::to_string(evaluated++),
                                            problem.task, kernels::DeviceKind::cuda, *source};
      auto status = shared_engine()->evaluate(input, out);
      DRK_REQUIRE_MESSAGE(status.ok(), status.error().describe());
      const auto result = out.asReader();
      DRK_INFO("compile log: " << result.getCompileLog().cStr());
      DRK_INFO("error text: " << result.getErrorText().cStr() << " max abs error " << result.getMaxAbsError());
      DRK_CHECK(result.getCompiled());
      DRK_CHECK(result.getSandbox() == msg::SandboxOutcome::OK);
      DRK_CHECK(result.getCorrect());
      DRK_CHECK(result.getEvidence().getCudaError().size() == 0);
      const bool library = problem.family == Family::gemm && choice.value(cuda_gemm_knob::use_library) == "library";
      if (!library) DRK_CHECK(result.getGpu().getCoverage() == doctest::Approx(1.0));
      if (library) DRK_CHECK(result.getGpu().getCoverage() < 1.0);
    }
  }
  std::printf("evaluated %d rendered CUDA candidates\n", evaluated);
}

}  // namespace
}  // namespace drk::schedule
