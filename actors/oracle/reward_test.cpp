#include "actors/oracle/reward.h"

#include <vector>

#include <capnp/message.h>

#include "tests/doctest_drk.h"

using drk::oracle::RewardWeights;

namespace {

double reward_for(bool compiled, bool correct, bool honest, double speedup) {
  capnp::MallocMessageBuilder message;
  auto verdict = message.initRoot<drk::msg::Verdict>();
  verdict.setHonest(honest);
  auto result = verdict.initResult();
  result.setCompiled(compiled);
  result.setCorrect(correct);
  result.setSpeedup(speedup);
  return drk::oracle::reward(RewardWeights{}, verdict.asReader(), 1.0);
}

}  // namespace

DRK_TEST_CASE("KernelGYM's reward: half for correctness, half for the capped speedup") {
  DRK_CHECK(reward_for(true, true, true, 1.0) == doctest::Approx(1.0));
  DRK_CHECK(reward_for(true, true, true, 2.0) == doctest::Approx(1.5));
  DRK_CHECK(reward_for(true, true, true, 10.0) == doctest::Approx(2.0));
}

DRK_TEST_CASE("no reward without compiling, without correctness or without honesty") {
  DRK_CHECK(reward_for(false, false, true, 0.0) == 0.0);
  DRK_CHECK(reward_for(true, false, true, 5.0) == 0.0);
  DRK_CHECK(reward_for(true, true, false, 5.0) == 0.0);
}

DRK_TEST_CASE("reward weights come from the experiment and bad keys are named") {
  auto weights = drk::oracle::reward_weights_from(YAML::Load("reward: {speedup: 1.0, speedup_cap: 2}"));
  DRK_REQUIRE(weights.ok());
  DRK_CHECK(weights->speedup == 1.0);
  DRK_CHECK(weights->speedup_cap == 2.0);
  DRK_CHECK(weights->correct == 0.5);
  auto bad = drk::oracle::reward_weights_from(YAML::Load("reward: {speed: 1.0}"));
  DRK_REQUIRE_FALSE(bad.ok());
  DRK_CHECK(bad.error().message.find("speed") != std::string::npos);
}

DRK_TEST_CASE("the profiling reward is on by default for CUDA runs and off on the CPU") {
  auto cpu = drk::oracle::reward_weights_from(YAML::Load("device: cpu"));
  auto cuda = drk::oracle::reward_weights_from(YAML::Load("device: cuda"));
  auto cuda_off = drk::oracle::reward_weights_from(YAML::Load("{device: cuda, reward: {coverage: 0}}"));
  DRK_REQUIRE(cpu.ok());
  DRK_REQUIRE(cuda.ok());
  DRK_REQUIRE(cuda_off.ok());
  DRK_CHECK(cpu->coverage == 0.0);
  DRK_CHECK(cuda->coverage == drk::oracle::kDefaultCudaCoverageWeight);
  DRK_CHECK(cuda_off->coverage == 0.0);
}

DRK_TEST_CASE("a rejected result earns nothing, however fast") {
  capnp::MallocMessageBuilder message;
  auto verdict = message.initRoot<drk::msg::Verdict>();
  verdict.setHonest(false);
  auto result = verdict.initResult();
  result.setCompiled(true);
  result.setCorrect(true);
  result.setSpeedup(40.0);
  verdict.initFailedChecks(1)[0].setCode("results_cached");
  DRK_CHECK(drk::oracle::reward(RewardWeights{}, verdict.asReader(), 1.0) == 0.0);
}

namespace {

// A correct, honest result at speedup 1 under weights that count one objective only.
struct Weighed {
  capnp::MallocMessageBuilder message;
  Weighed() {
    auto verdict = message.initRoot<drk::msg::Verdict>();
    verdict.setHonest(true);
    auto built = verdict.initResult();
    built.setCompiled(true);
    built.setCorrect(true);
    built.setSpeedup(1.0);
  }
  drk::msg::EvalResult::Builder result() { return message.getRoot<drk::msg::Verdict>().getResult(); }
  // The reward beyond correctness and speedup.
  double objective(const RewardWeights& weights) {
    return drk::oracle::reward(weights, message.getRoot<drk::msg::Verdict>().asReader(), 1.0) - 1.0;
  }
};

RewardWeights only(double RewardWeights::*objective) {
  RewardWeights weights;
  weights.*objective = 1.0;
  return weights;
}

}  // namespace

DRK_TEST_CASE("memory: device memory the candidate keeps costs reward, half of the term at memory_scale_mb") {
  Weighed none;
  DRK_CHECK(none.objective(RewardWeights{}) == doctest::Approx(0.0));
  DRK_CHECK(none.objective(only(&RewardWeights::memory)) == doctest::Approx(1.0));
  Weighed holding;
  holding.result().initEvidence().setGpuMemoryBytes(uint64_t{256} << 20);
  DRK_CHECK(holding.objective(only(&RewardWeights::memory)) == doctest::Approx(0.5));
}

DRK_TEST_CASE("energy: the reference's energy per call over the candidate's, capped, only when resolved") {
  Weighed measured;
  auto energy = measured.result().initGpu().initEnergy();
  energy.setAvailable(true);
  energy.setResolved(true);
  energy.setCandidateMillijoulesPerCall(1.0);
  energy.setReferenceMillijoulesPerCall(2.0);
  DRK_CHECK(measured.objective(only(&RewardWeights::energy)) == doctest::Approx(2.0));
  energy.setReferenceMillijoulesPerCall(10.0);
  DRK_CHECK(measured.objective(only(&RewardWeights::energy)) == doctest::Approx(3.0));  // energy_cap
  energy.setResolved(false);
  DRK_CHECK(measured.objective(only(&RewardWeights::energy)) == doctest::Approx(0.0));
  Weighed unmeasured;
  DRK_CHECK(unmeasured.objective(only(&RewardWeights::energy)) == doctest::Approx(0.0));
}

DRK_TEST_CASE("convergence: as accurate as the float32 reference earns all of it, four times its error a quarter") {
  Weighed exact;
  DRK_CHECK(exact.objective(only(&RewardWeights::convergence)) == doctest::Approx(1.0));
  Weighed loose;
  auto evidence = loose.result().initEvidence();
  evidence.setPrecisionChecked(true);
  evidence.setReferencePrecisionError(1e-7);
  evidence.setPrecisionError(4e-7);
  DRK_CHECK(loose.objective(only(&RewardWeights::convergence)) == doctest::Approx(0.25));
  evidence.setPrecisionError(5e-8);
  DRK_CHECK(loose.objective(only(&RewardWeights::convergence)) == doctest::Approx(1.0));
}

DRK_TEST_CASE("the further objectives' keys are read, named when unknown, and their scales must be positive") {
  auto weights = drk::oracle::reward_weights_from(
      YAML::Load("reward: {memory: 0.2, memory_scale_mb: 64, energy: 0.3, energy_cap: 2, convergence: 0.1}"));
  DRK_REQUIRE(weights.ok());
  DRK_CHECK(weights->memory == 0.2);
  DRK_CHECK(weights->memory_scale_mb == 64.0);
  DRK_CHECK(weights->energy == 0.3);
  DRK_CHECK(weights->energy_cap == 2.0);
  DRK_CHECK(weights->convergence == 0.1);
  auto unknown = drk::oracle::reward_weights_from(YAML::Load("reward: {power: 1}"));
  DRK_REQUIRE_FALSE(unknown.ok());
  DRK_CHECK(unknown.error().message.find("energy_cap, convergence") != std::string::npos);
  auto zero_scale = drk::oracle::reward_weights_from(YAML::Load("reward: {memory_scale_mb: 0}"));
  DRK_REQUIRE_FALSE(zero_scale.ok());
  DRK_CHECK(zero_scale.error().message.find("memory_scale_mb") != std::string::npos);
}

DRK_TEST_CASE("the shapes of a task's range that a candidate declines cost it reward, by reward.shapes") {
  auto with_range = [](uint32_t tried, uint32_t handled, const RewardWeights& weights) {
    Weighed correct;
    auto evidence = correct.result().getEvidence();
    evidence.setRangeShapesTried(tried);
    evidence.setRangeShapesHandled(handled);
    evidence.setRangeShapesDeclined(tried - handled);
    return correct.objective(weights) + 1.0;
  };
  const RewardWeights defaults;
  DRK_CHECK(with_range(0, 0, defaults) == doctest::Approx(1.0));  // no range: unchanged
  DRK_CHECK(with_range(4, 4, defaults) == doctest::Approx(1.0));
  DRK_CHECK(with_range(4, 2, defaults) == doctest::Approx(0.6));  // 3 of 5 shapes, the task's own counted
  DRK_CHECK(with_range(4, 0, defaults) == doctest::Approx(0.2));
  DRK_CHECK(with_range(4, 0, defaults) < with_range(4, 1, defaults));
  RewardWeights half = defaults;
  half.shapes = 0.5;
  DRK_CHECK(with_range(4, 0, half) == doctest::Approx(0.6));
  auto free = drk::oracle::reward_weights_from(YAML::Load("reward: {shapes: 0}"));
  DRK_REQUIRE(free.ok());
  DRK_CHECK(with_range(4, 0, *free) == doctest::Approx(1.0));
  auto bad = drk::oracle::reward_weights_from(YAML::Load("reward: {shapes: 2}"));
  DRK_REQUIRE_FALSE(bad.ok());
  DRK_CHECK(bad.error().message.find("experiment.reward.shapes is a share from 0") != std::string::npos);
}

DRK_TEST_CASE("with timed shapes the speedup rewarded is their geometric mean, and a declined one costs as a declined draw") {
  auto with_timed = [](double own, std::vector<double> timed_speedups, double shapes_speedup) {
    Weighed correct;
    auto result = correct.result();
    result.setSpeedup(own);
    result.setShapesSpeedup(shapes_speedup);
    auto timed = result.initTimedShapes(static_cast<unsigned>(timed_speedups.size()));
    for (unsigned i = 0; i < timed_speedups.size(); ++i) {
      timed[i].setSpeedup(timed_speedups[i]);
      timed[i].setDeclined(timed_speedups[i] == 0.0);
    }
    return correct.objective(RewardWeights{}) + 1.0;
  };
  // Fast at the task's shape only: 3x there, 1/3x at the timed one, paid as 1x.
  DRK_CHECK(with_timed(3.0, {1.0 / 3.0}, 1.0) == doctest::Approx(1.0));
  DRK_CHECK(with_timed(3.0, {}, 0.0) == doctest::Approx(2.0));  // no timed shapes: the task's own speedup
  // One of two timed shapes declined: 2 of 3 shapes handled, so 1 - (1 - 2/3) = 2/3 of 0.5 + 0.5 * 2.
  DRK_CHECK(with_timed(2.0, {2.0, 0.0}, 2.0) == doctest::Approx(1.5 * 2.0 / 3.0));
}
