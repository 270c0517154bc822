// The CUDA scheduling space on a real device: corner points of every family, rendered for
// catalog tasks, are evaluated by the Evaluator's engine (nvcc, drk-sandbox-cuda, the task's
// LibTorch reference at the scaled shapes) and must be correct, with the product's own kernels
// covering the GPU time unless the library does the product. The float16 matmul_fp16 runs on
// cuda only, at KernelBench's shapes (4096^3, and 4099^3 in the second-shape trial): its corners
// with CUDA cores and with tensor cores must be correct against LibTorch's float16 product and
// pass the precision check against float64. Skips, saying why, without a usable GPU.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
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

evaluator::EngineOptions cuda_options(std::optional<kernels::DeviceKind> shapes, uint64_t seed,
                                      std::chrono::milliseconds call_timeout) {
  evaluator::EngineOptions options;
  options.device = kernels::DeviceKind::cuda;
  options.shapes = shapes;
  options.trials = 3;
  options.seed = seed;
  options.timing_budget_ms = 100;
  options.call_timeout = call_timeout;
  return options;
}

testing::TestEngine& shared_engine() {
  static testing::TestEngine engine("render-cuda-evaluation-test",
                                    cuda_options(kernels::DeviceKind::cpu, 97, std::chrono::milliseconds(4000)));
  return engine;
}

// At the cuda shapes: the tasks that have no scaled ones (matmul_fp16).
testing::TestEngine& published_shapes_engine() {
  static testing::TestEngine engine("render-cuda-evaluation-published-test",
                                    cuda_options(std::nullopt, 98, std::chrono::milliseconds(10000)));
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
      const std::string compile_log = result.getCompileLog().cStr();  // copies: printed after the readers go
      const std::string error_text = result.getErrorText().cStr();
      DRK_INFO("compile log: " << compile_log);
      DRK_INFO("error text: " << error_text << " max abs error " << result.getMaxAbsError());
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

DRK_TEST_CASE("rendered float16 matmuls are correct on the GPU with CUDA cores and with tensor cores [gpu]") {
  if (gpu_missing()) return;
  int evaluated = 0;
  for (const auto& point : testing::half_matmul_points()) {
    DRK_INFO(point.problem.task << ": " << point.choice.describe());
    auto source = render(point.problem, point.choice);
    DRK_REQUIRE_MESSAGE(source.ok(), (source.ok() ? "" : source.error().describe()));
    capnp::MallocMessageBuilder message;
    auto out = message.initRoot<msg::EvalResult>();
    const evaluator::CandidateInput input{"render/" + point.problem.task + "/" + std::to_string(evaluated++),
                                          point.problem.task, kernels::DeviceKind::cuda, *source};
    auto status = published_shapes_engine()->evaluate(input, out);
    DRK_REQUIRE_MESSAGE(status.ok(), status.error().describe());
    const auto result = out.asReader();
    const auto evidence = result.getEvidence();
    // Copies: the captured text is printed when a check fails, after these readers are gone.
    const std::string compile_log = result.getCompileLog().cStr();
    const std::string error_text = result.getErrorText().cStr();
    const std::string second_shape = evidence.getSecondShapeWrong().cStr();
    DRK_INFO("compile log: " << compile_log);
    DRK_INFO("error text: " << error_text << "; second shape: " << second_shape << "; max abs error "
                            << result.getMaxAbsError() << " precision error " << evidence.getPrecisionError()
                            << " (reference " << evidence.getReferencePrecisionError() << ")");
    DRK_CHECK(result.getCompiled());
    DRK_CHECK(result.getSandbox() == msg::SandboxOutcome::OK);
    DRK_CHECK(result.getCorrect());
    DRK_CHECK(evidence.getCudaError().size() == 0);
    DRK_CHECK(evidence.getSecondShapeChecked());
    DRK_CHECK(evidence.getSecondShapeWrong().size() == 0);
    DRK_CHECK(evidence.getPrecisionChecked());
    // Float32 accumulation rounded once to float16, like the reference: the Verifier's budget.
    DRK_CHECK(evidence.getPrecisionError() <= std::max(64.0 * evidence.getReferencePrecisionError(), 1.0 / 65536.0));
    DRK_CHECK(result.getGpu().getCoverage() == doctest::Approx(1.0));
    std::printf("%s: %s: %.1f us (reference %.1f us)\n", point.problem.task.c_str(), point.choice.describe().c_str(),
                result.getCandidateTiming().getMedianUs(), result.getReferenceTiming().getMedianUs());
  }
  std::printf("evaluated %d rendered float16 CUDA candidates\n", evaluated);
}

}  // namespace
}  // namespace drk::schedule
