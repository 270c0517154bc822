// The Learner's and the Oracle's training rules as pure functions: rollback on a collapsing
// reward, PRS and MRS selection, training stages (reading, the stage of a step, validation of
// the YAML), and how the head shows a rollback.
#include <capnp/message.h>

#include <string>
#include <vector>

#include "actors/learner/learner_actor.h"
#include "runtime/payload.h"
#include "actors/learner/rejection_sampling.h"
#include "actors/learner/rollback_monitor.h"
#include "actors/oracle/oracle_actor.h"
#include "runtime/topology/experiment_keys.h"
#include "training/step_progress.h"
#include "training/training_stages.h"
#include "runtime/topology/topology.h"
#include "tests/doctest_drk.h"
#include "tests/support/fake_actor_context.h"
#include "tests/support/run_dir.h"

namespace drk::learner {
namespace {

// Feeds mean rewards, one step each, with the behaviour version of each step (a version per
// step: step s is rolled out by version s unless a rollback said otherwise) and returns the
// decisions.
std::vector<RollbackDecision> play(RollbackMonitor& monitor, const std::vector<double>& rewards) {
  std::vector<RollbackDecision> decisions;
  for (size_t step = 0; step < rewards.size(); ++step) {
    decisions.push_back(monitor.observe(static_cast<uint32_t>(step), rewards[step]));
  }
  return decisions;
}

DRK_TEST_CASE("three falls of more than 15% in a row roll back to the last stable version") {
  RollbackMonitor monitor(RollbackSettings{});
  //                        v0   v1   v2   v3 (fall) v4 (fall) v5 (fall)
  const auto decisions = play(monitor, {0.5, 1.0, 0.9, 0.80, 0.70, 0.60});
  DRK_CHECK_FALSE(decisions[2].fall);  // 0.9 is within 15% of 1.0
  DRK_CHECK(decisions[3].fall);        // 0.80 < 0.85 * 1.0
  DRK_CHECK(decisions[3].reference == doctest::Approx(1.0));
  DRK_CHECK_FALSE(decisions[3].rollback);
  DRK_CHECK_FALSE(decisions[4].rollback);
  DRK_CHECK(decisions[5].rollback);
  DRK_CHECK(decisions[5].target_version == 2);  // the last stable step's version, not the best
  DRK_CHECK(monitor.diagnostic());
  DRK_CHECK(monitor.falls_in_a_row() == 0);
}

DRK_TEST_CASE("a stable step between falls restarts the count and ends diagnostic mode") {
  RollbackMonitor monitor(RollbackSettings{});
  auto decisions = play(monitor, {1.0, 0.8, 0.8, 0.9, 0.8, 0.8});
  for (const auto& decision : decisions) DRK_CHECK_FALSE(decision.rollback);
  DRK_CHECK(monitor.falls_in_a_row() == 2);
  DRK_CHECK(monitor.observe(6, 0.1).rollback);
  DRK_CHECK(monitor.diagnostic());
  DRK_CHECK_FALSE(monitor.observe(7, 0.95).fall);
  DRK_CHECK_FALSE(monitor.diagnostic());
}

DRK_TEST_CASE("the reference is the best of the last stable steps only") {
  RollbackMonitor monitor(RollbackSettings{.enabled = true, .drop = 0.15, .patience = 3, .window = 2});
  // 2.0 leaves the window of two stable steps; 0.9 is then compared with max(1.0, 1.0).
  const auto decisions = play(monitor, {2.0, 1.0, 1.0, 0.9});
  DRK_CHECK(decisions[1].fall);  // 1.0 < 0.85 * 2.0
  DRK_CHECK(decisions[2].fall);
  // Falls never join the window: the reference is still 2.0.
  DRK_CHECK(decisions[3].reference == doctest::Approx(2.0));
  DRK_CHECK(decisions[3].rollback);
  DRK_CHECK(decisions[3].target_version == 0);
}

DRK_TEST_CASE("rewards at zero or a disabled rule never roll back") {
  RollbackMonitor zero(RollbackSettings{});
  for (const auto& decision : play(zero, {0.0, 0.0, 0.0, 0.0, 0.0})) DRK_CHECK_FALSE(decision.fall);
  RollbackMonitor disabled(RollbackSettings{.enabled = false});
  for (const auto& decision : play(disabled, {1.0, 0.1, 0.1, 0.1, 0.1})) DRK_CHECK_FALSE(decision.fall);
}

DRK_TEST_CASE("PRS keeps correct turns by coverage and every incorrect turn") {
  const PrsSettings prs{};
  DRK_CHECK(prs_keep_probability(prs, true, 0.2) == 0.0);
  DRK_CHECK(prs_keep_probability(prs, true, 0.35) == doctest::Approx(0.5));
  DRK_CHECK(prs_keep_probability(prs, true, 0.9) == 1.0);
  DRK_CHECK(prs_keep_probability(prs, false, 0.0) == 1.0);
  DRK_CHECK_FALSE(prs_keeps(prs, true, 0.35, 0.6));
  DRK_CHECK(prs_keeps(prs, true, 0.35, 0.4));
  const PrsSettings hard{.enabled = true, .coverage_min = 0.5, .ramp = 0.0};
  DRK_CHECK_FALSE(prs_keeps(hard, true, 0.49, 0.0));
  DRK_CHECK(prs_keeps(hard, true, 0.5, 0.999));
  DRK_CHECK(prs_keeps(PrsSettings{.enabled = false}, true, 0.0, 0.5));
  const double draw = prs_uniform_draw(1, "s0/relu/0/t1");
  DRK_CHECK(draw == prs_uniform_draw(1, "s0/relu/0/t1"));
  DRK_CHECK(draw != prs_uniform_draw(2, "s0/relu/0/t1"));
  DRK_CHECK(draw >= 0.0);
  DRK_CHECK(draw < 1.0);
}

DRK_TEST_CASE("MRS rejects a trajectory outside the band, or with one token below the veto") {
  const MrsSettings mrs{};
  DRK_CHECK(mrs_check(mrs, {0.0, 1e-5, -1e-5}) == MrsOutcome::kept);
  DRK_CHECK(mrs_check(mrs, {0.01, 0.0}) == MrsOutcome::outside_band);   // exp(0.005) > 1.001
  DRK_CHECK(mrs_check(mrs, {-0.01, 0.0}) == MrsOutcome::outside_band);
  // One token with ratio e^-10 < 1e-4, the others making the mean look fine.
  DRK_CHECK(mrs_check(mrs, {-10.0, 5.0, 5.0}) == MrsOutcome::vetoed);
  DRK_CHECK(mrs_check(mrs, {}) == MrsOutcome::kept);
  DRK_CHECK(mrs_check(MrsSettings{.enabled = false}, {-10.0}) == MrsOutcome::kept);
  const MrsSettings wide{.enabled = true, .band_low = 0.5, .band_high = 2.0, .veto = 1e-4};
  DRK_CHECK(mrs_check(wide, {0.5, -0.5, 0.3}) == MrsOutcome::kept);
}

DRK_TEST_CASE("training stages: each sees its keys over the experiment's, by step") {
  const auto experiment = YAML::Load(
      "{learning_rate: 0.05, ppo_epochs: 4, reward: {correct: 0.5, speedup: 0.5},"
      " training_stages: [{name: warmup, steps: 2, learning_rate: 0.1, reward: {correct: 1.0}},"
      "                   {name: main, steps: 3, ppo_epochs: 2}, {name: tail}]}");
  auto stages = training::read_training_stages(experiment);
  DRK_REQUIRE_MESSAGE(stages.ok(), stages.error().message);
  DRK_REQUIRE(stages->size() == 3);
  const auto& warmup = (*stages)[0].experiment;
  DRK_CHECK(warmup["learning_rate"].as<double>() == 0.1);
  DRK_CHECK(warmup["ppo_epochs"].as<int>() == 4);
  DRK_CHECK(warmup["reward"]["correct"].as<double>() == 1.0);
  DRK_CHECK(warmup["reward"]["speedup"].as<double>() == 0.5);  // merged key by key
  DRK_CHECK_FALSE(warmup["training_stages"].IsDefined());
  DRK_CHECK((*stages)[1].experiment["ppo_epochs"].as<int>() == 2);
  DRK_CHECK((*stages)[1].experiment["learning_rate"].as<double>() == 0.05);
  DRK_CHECK(experiment["learning_rate"].as<double>() == 0.05);  // the experiment is untouched
  const std::vector<size_t> expected = {0, 0, 1, 1, 1, 2, 2, 2};
  for (uint32_t step = 0; step < expected.size(); ++step) {
    DRK_CHECK(training::training_stage_at(*stages, step) == expected[step]);
  }
  auto none = training::read_training_stages(YAML::Load("{learning_rate: 0.05}"));
  DRK_REQUIRE(none.ok());
  DRK_REQUIRE(none->size() == 1);
  DRK_CHECK(training::training_stage_at(*none, 40) == 0);
  DRK_CHECK((*none)[0].experiment["learning_rate"].as<double>() == 0.05);
  auto unbounded = training::read_training_stages(YAML::Load("{training_stages: [{name: a}, {name: b}]}"));
  DRK_REQUIRE_FALSE(unbounded.ok());
  DRK_CHECK(unbounded.error().message.find("training_stages[0] ('a') needs `steps` >= 1") != std::string::npos);
}

DRK_TEST_CASE("a topology's training_stages are checked key by key, with their lines") {
  runtime::register_experiment_keys(learner_experiment_keys());
  runtime::register_experiment_keys(oracle::oracle_experiment_keys());
  testing::RunDir dir;
  auto good = runtime::load_topology(dir.write(
      "g.yaml",
      "name: t\nactors: [{role: a}]\nexperiment:\n  training_stages:\n"
      "    - {name: warmup, steps: 2, learning_rate: 0.1, reward: {correct: 1.0, coverage: 0.5}}\n"
      "    - {name: main, ppo_epochs: 2, kl_max: 0.05}\n"));
  DRK_REQUIRE_MESSAGE(good.ok(), good.error().message);
  auto bad = runtime::load_topology(dir.write(
      "b.yaml",
      "name: t\nactors: [{role: a}]\nexperiment:\n  training_stages:\n"
      "    - {name: warmup, steps: many, reward: {correctness: 1.0}}\n"
      "    - {name: main, lr: 0.1}\n"));
  DRK_REQUIRE_FALSE(bad.ok());
  const std::string& message = bad.error().message;
  DRK_CHECK_MESSAGE(message.find("b.yaml:5: experiment.training_stages[].steps must be") != std::string::npos, message);
  DRK_CHECK_MESSAGE(message.find("experiment.training_stages[].reward.correctness is not a key") != std::string::npos,
                    message);
  DRK_CHECK_MESSAGE(message.find("b.yaml:6: experiment.training_stages[].lr is not a key") != std::string::npos, message);
  auto not_a_list = runtime::load_topology(
      dir.write("n.yaml", "name: t\nactors: [{role: a}]\nexperiment:\n  training_stages: {name: main}\n"));
  DRK_REQUIRE_FALSE(not_a_list.ok());
  DRK_CHECK(not_a_list.error().message.find("experiment.training_stages must be a list of maps") != std::string::npos);
}

DRK_TEST_CASE("the Learner's settings that cannot work are refused at load, with their lines and the reason") {
  runtime::register_experiment_keys(learner_experiment_keys());
  testing::RunDir dir;
  auto good = runtime::load_topology(dir.write(
      "g.yaml", "name: t\nactors: [{role: a}]\nexperiment:\n  group_size: 2\n  estimator: grpo\n"
                "  ppo: {clip_low: 0.1, clip_high: 0.3, dual_clip: 2.5}\n"));
  DRK_REQUIRE_MESSAGE(good.ok(), good.error().message);
  auto bad = runtime::load_topology(dir.write(
      "b.yaml", "name: t\nactors: [{role: a}]\nexperiment:\n  group_size: 1\n  estimator: reinforce\n"
                "  ppo: {dual_clip: 0.5}\n  device: tpu\n"));
  DRK_REQUIRE_FALSE(bad.ok());
  const std::string& message = bad.error().message;
  DRK_CHECK_MESSAGE(message.find("b.yaml:4: experiment.group_size must be at least 2 (TRLOO and GRPO judge a sample "
                                 "against the others of its group") != std::string::npos,
                    message);
  DRK_CHECK_MESSAGE(message.find("b.yaml:5: experiment.estimator must be one of trloo, grpo, not 'reinforce'") !=
                        std::string::npos,
                    message);
  DRK_CHECK_MESSAGE(message.find("b.yaml:6: experiment.ppo.dual_clip must be at least 1") != std::string::npos, message);
  DRK_CHECK_MESSAGE(message.find("b.yaml:7: experiment.device must be one of cpu, cuda, not 'tpu'") != std::string::npos,
                    message);
}

DRK_TEST_CASE("settings an actor would refuse at start are refused at load, at their line, in their stage") {
  runtime::register_experiment_keys(learner_experiment_keys());
  runtime::register_experiment_keys(oracle::oracle_experiment_keys());
  runtime::register_experiment_check(learner_experiment_check);
  runtime::register_experiment_check(oracle::oracle_experiment_check);
  runtime::register_experiment_views(training::training_stage_views);
  testing::RunDir dir;
  auto bad = runtime::load_topology(dir.write(
      "s.yaml",
      "name: t\nactors: [{role: a}]\nexperiment:\n  mrs: {band: [1.1, 0.9]}\n  training_stages:\n"
      "    - {name: warmup, steps: 2, reward: {speedup_cap: -1}}\n    - {name: main}\n"));
  DRK_REQUIRE_FALSE(bad.ok());
  const std::string& message = bad.error().message;
  DRK_CHECK_MESSAGE(message.find("s.yaml:4: experiment.mrs.band must be two ratios [low, high]") != std::string::npos,
                    message);
  DRK_CHECK_MESSAGE(message.find("s.yaml:6: training stage 'warmup': experiment.reward: speedup_cap") !=
                        std::string::npos,
                    message);
  auto unbounded = runtime::load_topology(dir.write(
      "u.yaml", "name: t\nactors: [{role: a}]\nexperiment:\n  training_stages: [{name: a}, {name: b}]\n"));
  DRK_REQUIRE_FALSE(unbounded.ok());
  DRK_CHECK_MESSAGE(unbounded.error().message.find("u.yaml:4: experiment.training_stages[0] ('a') needs `steps` >= 1") !=
                        std::string::npos,
                    unbounded.error().message);
}

DRK_TEST_CASE("the head's progress line shows a rollback, diagnostic mode and rejections") {
  capnp::MallocMessageBuilder builder;
  auto report = builder.initRoot<msg::StepReport>();
  report.setStep(5);
  report.setPolicyVersion(6);
  report.setMeanReward(0.25);
  report.setSeconds(3.0);
  report.setStage("main");
  report.setPrsRejected(2);
  report.setMrsRejected(1);
  report.setRolledBack(true);
  report.setRolledBackTo(2);
  report.setDiagnostic(true);
  const std::string line = training::format_progress(report.asReader(), 8);
  DRK_CHECK_MESSAGE(line.find("(3.0 s)  stage main  rejected prs 2 mrs 1  ROLLBACK to v2  DIAGNOSTIC") !=
                        std::string::npos,
                    line);
}

DRK_TEST_CASE("the Oracle weighs a reward with the stage of the candidate's step") {
  runtime::ActorSpec spec;
  spec.name = "oracle";
  spec.role = "oracle";
  spec.experiment = YAML::Load(
      "{reward: {correct: 0.5, speedup: 0.5}, training_stages: [{name: warmup, steps: 2, reward: {speedup: 0.0}},"
      " {name: main}]}");
  testing::FakeActorContext context(spec);
  auto oracle = oracle::make_oracle_actor(spec);
  const auto verdict_of_step = [&](uint32_t step) {
    testing::deliver(*oracle, context, [&](msg::Envelope::Builder envelope) {
      auto verdict = runtime::init_payload<msg::Verdict>(envelope);
      verdict.setHonest(true);
      auto result = verdict.initResult();
      result.setCompiled(true);
      result.setCorrect(true);
      result.setSpeedup(2.0);
      auto candidate = result.initCandidate();
      candidate.setId("s" + std::to_string(step) + "/relu/0/t1");
      candidate.setStep(step);
      candidate.setGenerator("generator.0");
    });
  };
  verdict_of_step(1);
  verdict_of_step(2);
  const auto feedback = context.sent_of<msg::Feedback>();
  DRK_REQUIRE(feedback.size() == 2);
  DRK_CHECK(runtime::payload_of<msg::Feedback>(feedback[0]->envelope()).value().getReward() == doctest::Approx(0.5));  // warmup
  DRK_CHECK(runtime::payload_of<msg::Feedback>(feedback[1]->envelope()).value().getReward() == doctest::Approx(1.5));  // main
  const auto scored = context.sent_of<msg::Scored>();
  DRK_REQUIRE(scored.size() == 2);
  const std::string summary = runtime::payload_of<msg::Scored>(scored[0]->envelope()).value().getSummary().cStr();
  DRK_CHECK(summary == std::string(runtime::payload_of<msg::Feedback>(feedback[0]->envelope()).value().getSummary().cStr()));
  DRK_CHECK(summary.find("reward=0.500") != std::string::npos);
}

DRK_TEST_CASE("the profiling reward: a CUDA candidate's coverage is weighed into its reward, a CPU one's is 1") {
  runtime::ActorSpec spec;
  spec.name = "oracle";
  spec.role = "oracle";
  spec.experiment = YAML::Load("{device: cuda, reward: {correct: 0.5, speedup: 0.5, coverage: 0.5}}");
  testing::FakeActorContext context(spec);
  auto oracle = oracle::make_oracle_actor(spec);
  const auto verdict_of = [&](const std::string& id, msg::Device device, bool correct) {
    testing::deliver(*oracle, context, [&](msg::Envelope::Builder envelope) {
      auto verdict = runtime::init_payload<msg::Verdict>(envelope);
      verdict.setHonest(true);
      auto result = verdict.initResult();
      result.setCompiled(true);
      result.setCorrect(correct);
      result.setSpeedup(correct ? 2.0 : 0.0);
      result.initGpu().setCoverage(0.6);
      auto candidate = result.initCandidate();
      candidate.setId(id);
      candidate.setDevice(device);
      candidate.setGenerator("generator.0");
    });
  };
  verdict_of("s0/relu/0/t1", msg::Device::CUDA, true);
  verdict_of("s0/relu/1/t1", msg::Device::CPU, true);
  verdict_of("s0/relu/2/t1", msg::Device::CUDA, false);
  const auto feedback = context.sent_of<msg::Feedback>();
  DRK_REQUIRE(feedback.size() == 3);
  // 0.5 * correct + 0.5 * min(2, 3) + 0.5 * coverage * correct
  DRK_CHECK(runtime::payload_of<msg::Feedback>(feedback[0]->envelope()).value().getReward() == doctest::Approx(1.8));
  DRK_CHECK(runtime::payload_of<msg::Feedback>(feedback[1]->envelope()).value().getReward() == doctest::Approx(2.0));
  DRK_CHECK(runtime::payload_of<msg::Feedback>(feedback[2]->envelope()).value().getReward() == doctest::Approx(0.0));
}

}  // namespace
}  // namespace drk::learner
