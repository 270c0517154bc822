// The task families beyond elementwise, rowwise and gemm, through the real EvaluationEngine:
// an honest hand-written CPU candidate per family (tests/candidates) is evaluated correct and
// timed. cross_entropy also carries the int64 targets input and the scalar output through the
// shared region and the sandbox.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <capnp/message.h>

#include "actors/evaluator/evaluation.h"
#include "tests/doctest_drk.h"
#include "tests/support/test_engine.h"

namespace fs = std::filesystem;
using namespace drk::evaluator;
using drk::msg::SandboxOutcome;

namespace {

std::string candidate(const std::string& name) { return drk::testing::candidate_source(name); }

EvaluationEngine& engine() {
  static drk::testing::TestEngine shared("families-test", [] {
    EngineOptions options;
    options.trials = 2;
    options.seed = 4321;
    options.timing_budget_ms = 20;
    options.min_samples = 3;
    options.call_timeout = std::chrono::milliseconds(3000);
    return options;
  }());
  return *shared;
}

void check_correct_and_timed(const std::string& task, const std::string& file) {
  capnp::MallocMessageBuilder message;
  auto out = message.initRoot<drk::msg::EvalResult>();
  CandidateInput input{"test/" + file, task, drk::kernels::DeviceKind::cpu, candidate(file)};
  auto status = engine().evaluate(input, out);
  DRK_REQUIRE_MESSAGE(status.ok(), (status.ok() ? "" : status.error().message));
  auto r = out.asReader();
  const std::string what = task + " with " + file + ": " + r.getErrorText().cStr() + r.getCompileLog().cStr();
  DRK_INFO(what);
  DRK_CHECK(r.getCompiled());
  DRK_CHECK(r.getSandbox() == SandboxOutcome::OK);
  DRK_CHECK(r.getCorrect());
  DRK_CHECK(r.getTrialsPassed() == 2);
  DRK_CHECK(r.getCandidateTiming().getMedianUs() > 0);
  DRK_CHECK(r.getReferenceTiming().getMedianUs() > 0);
  DRK_CHECK(std::isfinite(r.getSpeedup()));
  DRK_CHECK_FALSE(r.getEvidence().getOutputsLeftPoisoned());
  DRK_CHECK_FALSE(r.getEvidence().getInputsMutated());
}

}  // namespace

DRK_TEST_CASE("reduction: an honest sum over a dim is correct") {
  check_correct_and_timed("sum_reduction", "sum_reduction.cpp");
}

DRK_TEST_CASE("batched_gemm: an honest batched matrix product is correct") {
  check_correct_and_timed("batched_matmul", "batched_matmul.cpp");
}

DRK_TEST_CASE("conv2d: an honest direct convolution with its epilogue is correct") {
  check_correct_and_timed("conv2d_relu_biasadd", "conv2d_relu_biasadd.cpp");
}

DRK_TEST_CASE("cross_entropy: int64 targets reach the candidate and its scalar loss is correct") {
  check_correct_and_timed("cross_entropy", "cross_entropy.cpp");
}

DRK_TEST_CASE("attention: an honest scaled dot-product attention is correct") {
  check_correct_and_timed("scaled_dot_product_attention", "scaled_dot_product_attention.cpp");
}
