// The evaluation engine's steps after a timing, with the CPU device's real compile, load and
// correctness trials but a timer that returns chosen samples (EngineOptions::make_device): an
// implausibly fast result is timed again with inputs swapped between calls and checked for
// out-of-bounds accesses; an ordinary one is neither.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <capnp/message.h>

#include "actors/evaluator/engine/evaluation_device.h"
#include "actors/evaluator/engine/host_evaluation_device.h"
#include "actors/evaluator/evaluation.h"
#include "tests/doctest_drk.h"
#include "tests/support/test_engine.h"

using namespace drk::evaluator;

namespace {

// What a device saw, in order: "compiled", "load", "timing" or "timing with swaps", "bounds check".
using StepLog = std::vector<std::string>;

// Returns one scripted sample set per call. With `peak_bytes_per_s` it reports the device's peak
// bandwidth as a GPU timer does, so that a fast enough candidate lies beyond the roofline.
class ScriptedTimer final : public Timer {
 public:
  ScriptedTimer(StepLog& log, std::vector<TimingSamples> script, double peak_bytes_per_s)
      : log_(log), script_(std::move(script)), peak_bytes_per_s_(peak_bytes_per_s) {}

  uint32_t buffer_sets(uint32_t timing_sets) const override { return timing_sets; }

  drk::Status time(EvaluationRun& run, TimingSamples& samples) override {
    log_.push_back(run.swap_seed != 0 ? "timing with swaps" : "timing");
    DRK_REQUIRE(calls_ < script_.size());
    samples = script_[calls_++];
    if (peak_bytes_per_s_ > 0) run.out.initGpu().setPeakBytesPerS(peak_bytes_per_s_);
    return {};
  }

 private:
  StepLog& log_;
  std::vector<TimingSamples> script_;
  double peak_bytes_per_s_;
  std::size_t calls_ = 0;
};

// The CPU device, but for its timer (ScriptedTimer) and its bounds check (logged only).
class ScriptedDevice final : public EvaluationDevice {
 public:
  ScriptedDevice(StepLog& log, std::vector<TimingSamples> script, double peak_bytes_per_s)
      : log_(log), script_(std::move(script)), peak_bytes_per_s_(peak_bytes_per_s) {}

  drk::kernels::DeviceKind kind() const override { return host_.kind(); }
  drk::msg::Language language() const override { return host_.language(); }
  void configure_sandbox(EngineOptions& options) const override { host_.configure_sandbox(options); }
  void describe_reference(drk::kernels::ReferenceBuild& build) const override { host_.describe_reference(build); }
  bool spares_beside_candidate() const override { return host_.spares_beside_candidate(); }
  TensorStore* device_store() override { return host_.device_store(); }
  void after_reply() override { host_.after_reply(); }
  void start_warm_up() override { host_.start_warm_up(); }
  void finish_warm_up() override { host_.finish_warm_up(); }
  std::set<std::string> record_resources(const std::string& compiler_output,
                                         drk::msg::EvalResult::Builder out) const override {
    log_.push_back("compiled");
    return host_.record_resources(compiler_output, out);
  }
  void before_load(SandboxSession& session, TensorStore& shared) override {
    log_.push_back("load");
    host_.before_load(session, shared);
  }
  std::unique_ptr<Timer> make_timer(SandboxSession&, const EngineOptions&, uint64_t) const override {
    return std::make_unique<ScriptedTimer>(log_, script_, peak_bytes_per_s_);
  }
  void check_bounds(BoundsCheck&, EvaluationRun&, const drk::compile::CompiledCandidate&) const override {
    log_.push_back("bounds check");
  }

 private:
  StepLog& log_;
  std::vector<TimingSamples> script_;
  double peak_bytes_per_s_;
  HostEvaluationDevice host_;
};

TimingSamples samples(double candidate_us, double reference_us) {
  TimingSamples chosen;
  chosen.candidate_us.assign(5, candidate_us);
  chosen.reference_us.assign(5, reference_us);
  return chosen;
}

struct Outcome {
  StepLog steps;
  capnp::MallocMessageBuilder message;
  drk::msg::EvalResult::Reader result;
};

// Evaluates the honest ReLU on an engine whose timer answers with `script`, one entry per timing.
std::unique_ptr<Outcome> evaluate_scripted(const std::string& label, std::vector<TimingSamples> script,
                                           double peak_bytes_per_s) {
  auto outcome = std::make_unique<Outcome>();
  EngineOptions options;
  options.trials = 2;
  options.seed = 77;
  options.make_device = [&outcome, script, peak_bytes_per_s](const EngineOptions&) -> drk::Result<std::unique_ptr<EvaluationDevice>> {
    return std::unique_ptr<EvaluationDevice>(std::make_unique<ScriptedDevice>(outcome->steps, script, peak_bytes_per_s));
  };
  drk::testing::TestEngine engine(label, options);
  auto out = outcome->message.initRoot<drk::msg::EvalResult>();
  const auto status = engine->evaluate(
      CandidateInput{"test/relu-scripted", "relu", drk::kernels::DeviceKind::cpu,
                     drk::testing::candidate_source("relu.cpp")},
      out);
  DRK_REQUIRE_MESSAGE(status.ok(), (status.ok() ? "" : status.error().message));
  outcome->result = out.asReader();
  return outcome;
}

}  // namespace

DRK_TEST_CASE("an implausibly fast result is timed again with swapped inputs and checked for bounds; an ordinary one is not") {
  // 10 us against the reference's 20: a speedup of 2, and no peak to be beyond.
  const auto ordinary = evaluate_scripted("engine-steps-ordinary", {samples(10, 20)}, 0);
  DRK_CHECK(ordinary->steps == StepLog{"compiled", "load", "timing"});
  DRK_REQUIRE(ordinary->result.getCorrect());
  DRK_CHECK(ordinary->result.getTrialsPassed() == 2);
  DRK_CHECK(ordinary->result.getSpeedup() == doctest::Approx(2.0));
  DRK_CHECK_FALSE(ordinary->result.getEvidence().getRooflineRemeasured());

  // A ReLU reading 4 MiB and writing 4 MiB in 1 ns moves 8 PB/s against a peak of 1 GB/s: beyond
  // the roofline. The second timing keeps half the speedup.
  const auto fast = evaluate_scripted("engine-steps-fast", {samples(0.001, 20), samples(0.002, 20)}, 1e9);
  DRK_CHECK(fast->steps == StepLog{"compiled", "load", "timing", "timing with swaps", "bounds check"});
  DRK_REQUIRE(fast->result.getCorrect());
  const auto evidence = fast->result.getEvidence();
  DRK_CHECK(evidence.getRooflineRemeasured());
  DRK_CHECK(evidence.getFirstSpeedup() == doctest::Approx(20000.0));
  DRK_CHECK(evidence.getFirstCandidateUs() == doctest::Approx(0.001));
  DRK_CHECK(fast->result.getSpeedup() == doctest::Approx(10000.0));
}
