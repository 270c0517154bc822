// The CUDA evaluation path end to end on a real device, with the real EvaluationEngine and
// drk-sandbox-cuda: honest candidates are correct, timed and traced (coverage, kernels, peaks);
// an illegal address, a device-side assert and a hang kill only the sandbox, and the same
// engine evaluates the next candidate correctly. Skips, saying why, without a usable GPU.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <capnp/message.h>
#include <unistd.h>

#include "actors/evaluator/cuda/cuda_device.h"
#include "actors/evaluator/evaluation.h"
#include "tests/doctest_drk.h"
#include "tests/support/test_engine.h"

namespace fs = std::filesystem;
using namespace drk::evaluator;
using drk::msg::SandboxOutcome;

namespace {

std::string cuda_candidate(const std::string& name) { return drk::testing::candidate_source("cuda/" + name); }

// One engine for the file (a CUDA sandbox start creates a context and loads LibTorch CUDA).
// Tasks run at their scaled (cpu) shapes so that the test stays fast.
drk::testing::TestEngine& shared_engine() {
  static drk::testing::TestEngine engine("cuda-engine-test", [] {
    EngineOptions options;
    options.device = drk::kernels::DeviceKind::cuda;
    options.shapes = drk::kernels::DeviceKind::cpu;
    options.trials = 3;
    options.seed = 4321;
    options.timing_budget_ms = 300;
    options.call_timeout = std::chrono::milliseconds(4000);
    return options;
  }());
  return engine;
}

bool gpu_missing() {
  auto device = drk::evaluator::cuda::query_device(0);
  if (device) return false;
  DRK_MESSAGE("skipped: " << device.error().message);
  std::printf("SKIPPED (no GPU): %s\n", device.error().message.c_str());
  return true;
}

struct Evaluated {
  capnp::MallocMessageBuilder message;
  drk::msg::EvalResult::Reader result;
};

std::unique_ptr<Evaluated> evaluate(const std::string& task, const std::string& file) {
  auto evaluated = std::make_unique<Evaluated>();
  auto out = evaluated->message.initRoot<drk::msg::EvalResult>();
  CandidateInput input{"test/" + file, task, drk::kernels::DeviceKind::cuda, cuda_candidate(file)};
  auto status = shared_engine()->evaluate(input, out);
  DRK_REQUIRE_MESSAGE(status.ok(), status.error().describe());
  evaluated->result = out.asReader();
  DRK_INFO("error text: " << evaluated->result.getErrorText().cStr());
  return evaluated;
}

void check_honest(drk::msg::EvalResult::Reader r) {
  DRK_CHECK(r.getCompiled());
  DRK_CHECK(r.getSandbox() == SandboxOutcome::OK);
  DRK_CHECK(r.getCorrect());
  DRK_CHECK(r.getTrialsPassed() == 3);
  DRK_CHECK(r.getSpeedup() > 0.0);
  DRK_CHECK(r.getCandidateTiming().getSamples() >= 3);
  DRK_CHECK(r.getReferenceTiming().getSamples() >= 3);
  DRK_CHECK(r.getCandidateTiming().getMedianUs() > 0.0);
  DRK_REQUIRE(r.getResources().size() >= 1);
  DRK_CHECK(r.getResources()[0].getRegisters() > 0);
  auto gpu = r.getGpu();
  DRK_REQUIRE(gpu.getKernels().size() >= 1);
  for (auto kernel : gpu.getKernels()) {
    DRK_CHECK(kernel.getOwn());
    DRK_CHECK(kernel.getLaunches() >= 3);
    DRK_CHECK(kernel.getBlock()[0] > 0);
    DRK_CHECK(kernel.getRegistersPerThread() > 0);
  }
  DRK_CHECK(gpu.getReferenceKernels().size() >= 1);
  DRK_CHECK(gpu.getCoverage() == doctest::Approx(1.0));
  DRK_CHECK(gpu.getCuptiSpanUs() > 0.0);
  DRK_CHECK(gpu.getPeakBytesPerS() > 1e11);
  DRK_CHECK(gpu.getPeakFlopsPerS() > 1e12);
  DRK_CHECK(gpu.getAchievedBytesPerS() > 0.0);
  DRK_CHECK(gpu.getL2FlushBytes() > 0);
  DRK_CHECK(r.getEvidence().getCudaError().size() == 0);
}

}  // namespace

DRK_TEST_CASE("honest CUDA candidates are correct, timed against LibTorch CUDA and fully covered [gpu]") {
  if (gpu_missing()) return;
  for (auto [task, file] : {std::pair{"relu", "relu.cu"}, {"softmax", "softmax.cu"}, {"matmul", "matmul.cu"}}) {
    DRK_INFO("candidate " << file);
    auto evaluated = evaluate(task, file);
    check_honest(evaluated->result);
  }
}

DRK_TEST_CASE("an illegal address and a device-side assert kill only the sandbox; the engine keeps serving [gpu]") {
  if (gpu_missing()) return;
  for (auto [file, words] : {std::pair{"illegal_address.cu", "illegal"}, {"device_assert.cu", "assert"}}) {
    DRK_INFO("candidate " << file);
    pid_t before = shared_engine()->sandbox_pid();
    auto crashed = evaluate("relu", file);
    DRK_CHECK_FALSE(crashed->result.getCorrect());
    DRK_CHECK(crashed->result.getSandbox() == SandboxOutcome::CRASHED);
    std::string cuda_error = crashed->result.getEvidence().getCudaError();
    DRK_CHECK_MESSAGE(cuda_error.find(words) != std::string::npos, cuda_error);
    DRK_CHECK(shared_engine()->sandbox_pid() != before);
    auto next = evaluate("relu", "relu.cu");
    check_honest(next->result);
  }
}

DRK_TEST_CASE("a kernel that never ends is killed at the deadline; the engine keeps serving [gpu]") {
  if (gpu_missing()) return;
  auto hung = evaluate("relu", "hang.cu");
  DRK_CHECK_FALSE(hung->result.getCorrect());
  DRK_CHECK(hung->result.getSandbox() == SandboxOutcome::TIMED_OUT);
  auto next = evaluate("relu", "relu.cu");
  check_honest(next->result);
}
