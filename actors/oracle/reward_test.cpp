#include "actors/oracle/reward.h"

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
