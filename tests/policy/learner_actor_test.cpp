// The Learner's step loop through a fake context: requests, trajectories, advantages, the
// update, checkpoints, reports, re-sends and resuming after a restart.
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>

#include "actors/learner/learner_actor.h"
#include "runtime/payload.h"
#include "kernels/schedule/observation.h"
#include "kernels/schedule/policy.h"
#include "kernels/schedule/policy_checkpoint.h"
#include "kernels/schedule/problem.h"
#include "tests/doctest_drk.h"
#include "tests/support/fake_actor_context.h"

namespace drk::learner {
namespace {

using testing::FakeActorContext;

struct TemporaryDirectory {
  TemporaryDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "drk-learner-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string path;
};

// `extra`: more experiment keys, as a YAML map's entries ("kl_max: 0.1, steps: 4").
FakeActorContext make_context(const std::string& run_dir, const std::string& extra = "") {
  runtime::ActorSpec spec;
  spec.name = "learner";
  spec.role = "learner";
  spec.run_dir = run_dir;
  spec.experiment = YAML::Load(
      "{seed: 3, tasks: [relu], group_size: 2, turns: 2, steps: 2, learning_rate: 0.01, "
      "ppo_epochs: 2, estimator: trloo, device: cpu}");
  for (const auto& entry : YAML::Load("{" + extra + "}")) spec.experiment[entry.first.Scalar()] = entry.second;
  FakeActorContext context(spec);
  context.roles = {{"generator", {"generator.0", "generator.1"}},
                   {"oracle", {"oracle"}},
                   {"archivist", {"archivist"}}};
  return context;
}

// Plays the trajectory of `request` with the version-0 policy (seed 3), rewards as given; the
// trajectory says it was played by the requested version, or `versions_behind` older.
void answer(runtime::Actor& actor, FakeActorContext& context, msg::RolloutRequest::Reader request,
            const std::vector<double>& rewards, double coverage = 1.0, uint32_t versions_behind = 0,
            bool screened = false) {
  auto problem = schedule::problem_from_task(request.getTask());
  DRK_REQUIRE(problem.ok());
  schedule::Policy policy(3, schedule::Device::cpu);
  std::mt19937_64 rng(request.getSampleIndex());
  testing::deliver(actor, context, [&](msg::Envelope::Builder envelope) {
    auto trajectory = runtime::init_payload<msg::Trajectory>(envelope);
    trajectory.setId(request.getTrajectoryId());
    trajectory.setStep(request.getStep());
    trajectory.setTask(request.getTask().getName());
    trajectory.setSampleIndex(request.getSampleIndex());
    trajectory.setPolicyVersion(request.getPolicyVersion() - std::min(versions_behind, request.getPolicyVersion()));
    auto turns = trajectory.initTurns(static_cast<unsigned>(rewards.size()));
    std::optional<schedule::PreviousTurn> previous;
    for (unsigned index = 0; index < rewards.size(); ++index) {
      const auto observation = schedule::observe(*problem, static_cast<int>(index + 1), 2, previous);
      std::optional<schedule::Choice> previous_choice;
      if (previous) previous_choice = previous->choice;
      const auto sampled = policy.sample(problem->family, observation, previous_choice, rng);
      auto turn = turns[index];
      turn.setFamily("elementwise");
      auto features = turn.initObservation(static_cast<unsigned>(observation.size()));
      for (unsigned at = 0; at < observation.size(); ++at) features.set(at, observation[at]);
      auto actions = turn.initActions(4);
      auto logprobs = turn.initActionLogprobs(4);
      for (unsigned knob = 0; knob < 4; ++knob) {
        actions.set(knob, sampled.decisions[knob]);
        logprobs.set(knob, sampled.logprobs[knob]);
      }
      turn.setReward(rewards[index]);
      turn.setCorrect(rewards[index] > 0.0);
      turn.setHonest(true);
      turn.setSpeedup(rewards[index]);
      turn.setCoverage(coverage);
      turn.setScreened(screened);
      turn.setCandidateId(std::string(request.getTrajectoryId().cStr()) + "/t" + std::to_string(index + 1));
      previous = schedule::PreviousTurn{sampled.choice, true, rewards[index] > 0.0, true, rewards[index],
                                        rewards[index]};
    }
  });
}

std::vector<const FakeActorContext::Sent*> requests_of_step(const FakeActorContext& context, uint32_t step) {
  std::vector<const FakeActorContext::Sent*> requests;
  for (const auto* sent : context.sent_of<msg::RolloutRequest>()) {
    if (runtime::payload_of<msg::RolloutRequest>(sent->envelope()).value().getStep() == step) requests.push_back(sent);
  }
  return requests;
}

DRK_TEST_CASE("a step goes from rollout requests to an update, a checkpoint and a report") {
  TemporaryDirectory run_dir;
  auto context = make_context(run_dir.path);
  auto actor = make_learner_actor(context.spec());
  actor->on_start(context);

  auto weights = context.sent_of<msg::PolicyWeights>();
  DRK_REQUIRE(weights.size() == 3);
  DRK_CHECK(weights[0]->recipient == "generator.0");
  DRK_CHECK(weights[1]->recipient == "generator.1");
  DRK_CHECK(weights[2]->recipient == "archivist");
  DRK_CHECK(runtime::payload_of<msg::PolicyWeights>(weights[0]->envelope()).value().getVersion() == 0);
  auto state = schedule::read_checkpoint_state(run_dir.path);
  DRK_REQUIRE(state.ok());
  DRK_REQUIRE(state->has_value());

  auto requests = requests_of_step(context, 0);
  DRK_REQUIRE(requests.size() == 2);
  DRK_CHECK(requests[0]->recipient == "generator.0");
  DRK_CHECK(requests[1]->recipient == "generator.1");
  auto first = runtime::payload_of<msg::RolloutRequest>(requests[0]->envelope()).value();
  auto second = runtime::payload_of<msg::RolloutRequest>(requests[1]->envelope()).value();
  DRK_CHECK(std::string(first.getTrajectoryId().cStr()) == "s0/relu/0");
  DRK_CHECK(first.getTurns() == 2);
  DRK_CHECK(std::string(first.getTask().getFamily().cStr()) == "elementwise");

  answer(*actor, context, first, {1.0, 2.0});
  answer(*actor, context, first, {1.0, 2.0});  // a duplicate: kept once
  DRK_CHECK(context.sent_of<msg::AdvantageRequest>().empty());
  answer(*actor, context, second, {0.0, 0.5});
  auto advantage_requests = context.sent_of<msg::AdvantageRequest>();
  DRK_REQUIRE(advantage_requests.size() == 1);
  DRK_CHECK(advantage_requests[0]->recipient == "oracle");
  DRK_CHECK(runtime::payload_of<msg::AdvantageRequest>(advantage_requests[0]->envelope()).value().getTrajectories().size() == 2);

  testing::deliver(*actor, context, [](msg::Envelope::Builder envelope) {
    envelope.getBody().initControl().setPeerRestarted("oracle");
  });
  DRK_CHECK(context.sent_of<msg::AdvantageRequest>().size() == 2);

  testing::deliver(*actor, context, [](msg::Envelope::Builder envelope) {
    auto advantages = runtime::init_payload<msg::Advantages>(envelope);
    advantages.setStep(0);
    auto items = advantages.initItems(4);
    const char* ids[] = {"s0/relu/0", "s0/relu/0", "s0/relu/1", "s0/relu/1"};
    const double values[] = {1.25, 0.75, -1.25, -0.75};
    for (unsigned index = 0; index < 4; ++index) {
      items[index].setTrajectoryId(ids[index]);
      items[index].setTurn(index % 2 + 1);
      items[index].setAdvantage(values[index]);
    }
  });
  auto reports = context.sent_of<msg::StepReport>();
  // Only to the Archivist, which shows it to the head once it is on record.
  DRK_REQUIRE(reports.size() == 1);
  DRK_CHECK(reports[0]->recipient == "archivist");
  auto report = runtime::payload_of<msg::StepReport>(reports[0]->envelope()).value();
  DRK_CHECK(report.getStep() == 0);
  DRK_CHECK(report.getPolicyVersion() == 1);
  DRK_CHECK(report.getMeanReward() == doctest::Approx(0.875));
  DRK_CHECK(report.getCorrectFraction() == doctest::Approx(0.75));
  DRK_CHECK(report.getBestSpeedup() == doctest::Approx(2.0));
  DRK_CHECK(report.getTrajectories() == 2);
  DRK_CHECK_FALSE(report.getFinished());
  DRK_CHECK(report.getLoss() != 0.0);
  weights = context.sent_of<msg::PolicyWeights>();
  DRK_REQUIRE(weights.size() == 6);
  DRK_CHECK(runtime::payload_of<msg::PolicyWeights>(weights[3]->envelope()).value().getVersion() == 1);
  DRK_CHECK(runtime::payload_of<msg::PolicyWeights>(weights[3]->envelope()).value().getParameters() !=
            runtime::payload_of<msg::PolicyWeights>(weights[0]->envelope()).value().getParameters());
  state = schedule::read_checkpoint_state(run_dir.path);
  DRK_REQUIRE(state.ok());
  DRK_CHECK((*state)->version == 1);
  DRK_CHECK((*state)->step == 1);
  DRK_CHECK((*state)->reports.size() == 1);
  DRK_CHECK(requests_of_step(context, 1).size() == 2);

  // A restarted Learner resumes at step 1 with version 1.
  auto restarted_context = make_context(run_dir.path);
  auto restarted = make_learner_actor(restarted_context.spec());
  restarted->on_start(restarted_context);
  auto resumed_weights = restarted_context.sent_of<msg::PolicyWeights>();
  DRK_REQUIRE(resumed_weights.size() == 3);
  DRK_CHECK(runtime::payload_of<msg::PolicyWeights>(resumed_weights[0]->envelope()).value().getVersion() == 1);
  DRK_CHECK(runtime::payload_of<msg::PolicyWeights>(resumed_weights[0]->envelope()).value().getParameters() ==
            runtime::payload_of<msg::PolicyWeights>(weights[3]->envelope()).value().getParameters());
  auto resumed = requests_of_step(restarted_context, 1);
  DRK_REQUIRE(resumed.size() == 2);
  DRK_CHECK(std::string(runtime::payload_of<msg::RolloutRequest>(resumed[0]->envelope()).value().getTrajectoryId().cStr()) ==
            "s1/relu/0");
  DRK_CHECK(requests_of_step(restarted_context, 0).empty());
}

DRK_TEST_CASE("init_policy starts a fresh run from another run's latest policy; tasks_per_step plays that many") {
  TemporaryDirectory trained_dir;
  {
    // A run that trained one step: its version 1 differs from the seed's version 0.
    auto context = make_context(trained_dir.path, "steps: 1");
    auto actor = make_learner_actor(context.spec());
    actor->on_start(context);
    auto requests = requests_of_step(context, 0);
    DRK_REQUIRE(requests.size() == 2);
    answer(*actor, context, runtime::payload_of<msg::RolloutRequest>(requests[0]->envelope()).value(), {1.0, 2.0});
    answer(*actor, context, runtime::payload_of<msg::RolloutRequest>(requests[1]->envelope()).value(), {0.0, 0.5});
    testing::deliver(*actor, context, [](msg::Envelope::Builder envelope) {
      auto advantages = runtime::init_payload<msg::Advantages>(envelope);
      advantages.setStep(0);
      auto items = advantages.initItems(4);
      const char* ids[] = {"s0/relu/0", "s0/relu/0", "s0/relu/1", "s0/relu/1"};
      for (unsigned index = 0; index < 4; ++index) {
        items[index].setTrajectoryId(ids[index]);
        items[index].setTurn(index % 2 + 1);
        items[index].setAdvantage(index < 2 ? 1.0 : -1.0);
      }
    });
    auto state = schedule::read_checkpoint_state(trained_dir.path);
    DRK_REQUIRE(state.ok());
    DRK_REQUIRE((*state)->version == 1);
  }
  auto trained = schedule::read_policy_version(trained_dir.path, 1);
  auto seeded = schedule::read_policy_version(trained_dir.path, 0);
  DRK_REQUIRE(trained.ok());
  DRK_REQUIRE(seeded.ok());
  DRK_REQUIRE(*trained != *seeded);

  TemporaryDirectory fresh_dir;
  auto context = make_context(fresh_dir.path, "init_policy: " + trained_dir.path +
                                                  ", tasks: [relu, sigmoid, tanh], tasks_per_step: 1");
  auto actor = make_learner_actor(context.spec());
  actor->on_start(context);
  auto weights = context.sent_of<msg::PolicyWeights>();
  DRK_REQUIRE(!weights.empty());
  auto first = runtime::payload_of<msg::PolicyWeights>(weights[0]->envelope()).value();
  DRK_CHECK(first.getVersion() == 0);
  const auto parameters = first.getParameters();
  DRK_CHECK(std::string(reinterpret_cast<const char*>(parameters.begin()), parameters.size()) == *trained);
  // One task of the three this step, played group_size (2) times.
  auto requests = requests_of_step(context, 0);
  DRK_REQUIRE(requests.size() == 2);
  const std::string task =
      runtime::payload_of<msg::RolloutRequest>(requests[0]->envelope()).value().getTask().getName().cStr();
  DRK_CHECK(std::string(runtime::payload_of<msg::RolloutRequest>(requests[1]->envelope()).value().getTask().getName().cStr()) ==
            task);
}

DRK_TEST_CASE("rollouts of a restarted or silent generator go to the next one") {
  TemporaryDirectory run_dir;
  auto context = make_context(run_dir.path);
  auto actor = make_learner_actor(context.spec());
  actor->on_start(context);
  DRK_REQUIRE(requests_of_step(context, 0).size() == 2);
  answer(*actor, context, runtime::payload_of<msg::RolloutRequest>(requests_of_step(context, 0)[1]->envelope()).value(), {0.0, 0.0});

  testing::deliver(*actor, context, [](msg::Envelope::Builder envelope) {
    envelope.getBody().initControl().setPeerRestarted("generator.0");
  });
  auto requests = requests_of_step(context, 0);
  DRK_REQUIRE(requests.size() == 3);  // only the unanswered one, to generator.1
  DRK_CHECK(requests[2]->recipient == "generator.1");
  DRK_CHECK(std::string(runtime::payload_of<msg::RolloutRequest>(requests[2]->envelope()).value().getTrajectoryId().cStr()) ==
            "s0/relu/0");
  auto weights = context.sent_of<msg::PolicyWeights>();
  DRK_CHECK(weights.back()->recipient == "generator.0");

  actor->on_timer(context, context.timers.back().token);
  requests = requests_of_step(context, 0);
  DRK_REQUIRE(requests.size() == 4);
  DRK_CHECK(requests[3]->recipient == "generator.0");
}

// Delivers the Advantages of `step` for every trajectory of group 2 with 2 turns.
void deliver_advantages(runtime::Actor& actor, FakeActorContext& context, uint32_t step) {
  testing::deliver(actor, context, [&](msg::Envelope::Builder envelope) {
    auto advantages = runtime::init_payload<msg::Advantages>(envelope);
    advantages.setStep(step);
    auto items = advantages.initItems(4);
    const double values[] = {1.25, 0.75, -1.25, -0.75};
    for (unsigned index = 0; index < 4; ++index) {
      items[index].setTrajectoryId("s" + std::to_string(step) + "/relu/" + std::to_string(index / 2));
      items[index].setTurn(index % 2 + 1);
      items[index].setAdvantage(values[index]);
      items[index].setReturn(2.0 * values[index]);
    }
  });
}

// Answers both rollouts of `step` with the rewards of each sample, then the advantages.
void play_step(runtime::Actor& actor, FakeActorContext& context, uint32_t step,
               const std::vector<std::vector<double>>& rewards, double coverage = 1.0,
               uint32_t versions_behind = 0, bool screened = false) {
  auto requests = requests_of_step(context, step);
  DRK_REQUIRE(requests.size() >= 2);
  for (unsigned sample = 0; sample < 2; ++sample) {
    answer(actor, context, runtime::payload_of<msg::RolloutRequest>(requests[sample]->envelope()).value(), rewards[sample], coverage,
           versions_behind, screened);
  }
  deliver_advantages(actor, context, step);
}

msg::StepReport::Reader last_report(const FakeActorContext& context) {
  return runtime::payload_of<msg::StepReport>(context.sent_of<msg::StepReport>().back()->envelope()).value();
}

DRK_TEST_CASE("the trained trajectories go to the Archivist with advantages, returns and masks") {
  TemporaryDirectory run_dir;
  auto context = make_context(run_dir.path);
  auto actor = make_learner_actor(context.spec());
  actor->on_start(context);
  play_step(*actor, context, 0, {{1.0, 2.0}, {0.0, 0.5}});
  const auto samples = context.sent_of<msg::Trajectory>();
  DRK_REQUIRE(samples.size() == 2);
  DRK_CHECK(samples[0]->recipient == "archivist");
  const auto turns = runtime::payload_of<msg::Trajectory>(samples[0]->envelope()).value().getTurns();
  DRK_REQUIRE(turns.size() == 2);
  DRK_CHECK(turns[0].getAdvantage() == doctest::Approx(1.25));
  DRK_CHECK(turns[0].getReturn() == doctest::Approx(2.5));
  DRK_CHECK(turns[0].getTrained());
  DRK_CHECK(std::string(turns[0].getRejectedBy().cStr()).empty());
  DRK_CHECK(turns[0].getLearnerLogprobs().size() == 4);
  DRK_CHECK(turns[0].getKeptDecisions().size() == 4);
  // The Learner's version-0 log-probabilities are the behaviour policy's: MRS keeps everything.
  DRK_CHECK(turns[0].getLearnerLogprobs()[0] == doctest::Approx(turns[0].getActionLogprobs()[0]));
  // Samples go before the report, so the archive holds them when the step is shown.
  size_t report_position = 0, sample_position = 0;
  for (size_t index = 0; index < context.sent.size(); ++index) {
    const auto envelope = context.sent[index].envelope();
    if (runtime::payload_of<msg::StepReport>(envelope)) report_position = index;
    if (runtime::payload_of<msg::Trajectory>(envelope)) sample_position = index;
  }
  DRK_CHECK(sample_position < report_position);
  const auto report = last_report(context);
  DRK_CHECK(report.getPpoEpochs() == 2);
  DRK_CHECK(report.getMrsRejected() == 0);
  DRK_CHECK(report.getPrsRejected() == 0);
  DRK_CHECK_FALSE(report.getRolledBack());
  DRK_CHECK_FALSE(report.getDiagnostic());
}

DRK_TEST_CASE("PRS keeps low-coverage correct turns out of the update, MRS stale trajectories") {
  TemporaryDirectory run_dir;
  auto context = make_context(run_dir.path, "steps: 3");
  auto actor = make_learner_actor(context.spec());
  actor->on_start(context);
  // Coverage 0.1: every correct turn is rejected by PRS (incorrect ones stay).
  play_step(*actor, context, 0, {{1.0, 2.0}, {0.0, 0.5}}, 0.1);
  auto report = last_report(context);
  DRK_CHECK(report.getPrsRejected() == 3);
  DRK_CHECK(report.getMrsRejected() == 0);
  auto turns = runtime::payload_of<msg::Trajectory>(context.sent_of<msg::Trajectory>()[1]->envelope()).value().getTurns();
  DRK_CHECK(turns[0].getTrained());  // reward 0: incorrect, kept
  DRK_CHECK(std::string(turns[1].getRejectedBy().cStr()) == "prs");
  // Step 1 played by the version-0 policy while the Learner holds version 1: the ratios leave
  // the band and MRS masks both trajectories.
  play_step(*actor, context, 1, {{1.0, 2.0}, {0.0, 0.5}});
  report = last_report(context);
  DRK_CHECK(report.getMrsRejected() == 4);
  DRK_CHECK(report.getPpoEpochs() == 0);
  turns = runtime::payload_of<msg::Trajectory>(context.sent_of<msg::Trajectory>()[2]->envelope()).value().getTurns();
  DRK_CHECK_FALSE(turns[0].getTrained());
  const std::string reason = turns[0].getRejectedBy().cStr();
  DRK_CHECK((reason == "mrs_band" || reason == "mrs_veto"));
}

DRK_TEST_CASE("a screened turn has no profile to judge: PRS leaves it to the update") {
  TemporaryDirectory run_dir;
  auto context = make_context(run_dir.path, "steps: 1");
  auto actor = make_learner_actor(context.spec());
  actor->on_start(context);
  // Predicted correct by the Oracle's cost model, never measured: on CUDA such a turn has no
  // CUPTI coverage (0), which PRS would read as a kernel that leaves all its time to libraries.
  play_step(*actor, context, 0, {{1.0, 2.0}, {0.0, 0.5}}, 0.0, 0, true);
  auto report = last_report(context);
  DRK_CHECK(report.getPrsRejected() == 0);
  auto turns = runtime::payload_of<msg::Trajectory>(context.sent_of<msg::Trajectory>()[1]->envelope()).value().getTurns();
  DRK_CHECK_MESSAGE(turns[1].getTrained(), std::string(turns[1].getRejectedBy().cStr()));
}

DRK_TEST_CASE("trajectories of a policy more than max_staleness versions behind stay out of the update") {
  TemporaryDirectory run_dir;
  auto context = make_context(run_dir.path, "steps: 4, max_staleness: 1, mrs: {enabled: false}");
  auto actor = make_learner_actor(context.spec());
  actor->on_start(context);
  play_step(*actor, context, 0, {{1.0, 2.0}, {0.0, 0.5}});
  play_step(*actor, context, 1, {{1.0, 2.0}, {0.0, 0.5}});
  // Step 2 trains version 2; played by version 0, two behind: stale.
  play_step(*actor, context, 2, {{1.0, 2.0}, {0.0, 0.5}}, 1.0, 2);
  auto report = last_report(context);
  DRK_CHECK(report.getStaleRejected() == 4);
  DRK_CHECK(report.getPpoEpochs() == 0);
  auto turns = runtime::payload_of<msg::Trajectory>(context.sent_of<msg::Trajectory>().back()->envelope()).value().getTurns();
  DRK_CHECK(std::string(turns[1].getRejectedBy().cStr()) == "stale");
  // One behind is within the bound.
  play_step(*actor, context, 3, {{1.0, 2.0}, {0.0, 0.5}}, 1.0, 1);
  report = last_report(context);
  DRK_CHECK(report.getStaleRejected() == 0);
  DRK_CHECK(report.getPpoEpochs() > 0);
}

DRK_TEST_CASE("the KL bound to the previous policy stops the epochs early") {
  TemporaryDirectory run_dir;
  auto context = make_context(run_dir.path, "ppo_epochs: 4, kl_max: 1e-12");
  auto actor = make_learner_actor(context.spec());
  actor->on_start(context);
  play_step(*actor, context, 0, {{1.0, 2.0}, {0.0, 0.5}});
  // Epoch 1 starts at the previous policy (KL 0); after its step the bound is exceeded.
  DRK_CHECK(last_report(context).getPpoEpochs() == 1);
}

DRK_TEST_CASE("training stages set the learning rate and epochs of their steps") {
  TemporaryDirectory run_dir;
  auto context = make_context(run_dir.path,
                              "steps: 2, mrs: {enabled: false}, training_stages: [{name: warmup, steps: 1, "
                              "ppo_epochs: 1}, {name: main, ppo_epochs: 3}]");
  auto actor = make_learner_actor(context.spec());
  actor->on_start(context);
  play_step(*actor, context, 0, {{1.0, 2.0}, {0.0, 0.5}});
  DRK_CHECK(std::string(last_report(context).getStage().cStr()) == "warmup");
  DRK_CHECK(last_report(context).getPpoEpochs() == 1);
  play_step(*actor, context, 1, {{1.0, 2.0}, {0.0, 0.5}});
  DRK_CHECK(std::string(last_report(context).getStage().cStr()) == "main");
  DRK_CHECK(last_report(context).getPpoEpochs() == 3);
}

DRK_TEST_CASE("a collapsing reward rolls the policy back to the last stable version, in diagnostic mode") {
  TemporaryDirectory run_dir;
  auto context = make_context(run_dir.path, "steps: 4, rollback: {patience: 2}");
  auto actor = make_learner_actor(context.spec());
  actor->on_start(context);
  const std::string version_0 = [&] {
    auto bytes = schedule::read_policy_version(run_dir.path, 0);
    DRK_REQUIRE(bytes.ok());
    return *bytes;
  }();
  play_step(*actor, context, 0, {{1.0, 2.0}, {1.0, 2.0}});  // v0: mean 1.5, stable
  DRK_CHECK_FALSE(last_report(context).getRolledBack());
  play_step(*actor, context, 1, {{0.5, 0.5}, {0.0, 0.5}});  // v1: mean 0.375, a fall
  DRK_CHECK_FALSE(last_report(context).getRolledBack());
  play_step(*actor, context, 2, {{0.5, 0.5}, {0.0, 0.5}});  // v2: the second fall in a row
  auto report = last_report(context);
  DRK_CHECK(report.getRolledBack());
  DRK_CHECK(report.getRolledBackTo() == 0);
  DRK_CHECK(report.getDiagnostic());
  DRK_CHECK(report.getPolicyVersion() == 3);
  DRK_CHECK(report.getPpoEpochs() == 0);
  // Version 3 is version 0's parameters, sent to every Generator and checkpointed.
  const auto weights = context.sent_of<msg::PolicyWeights>();
  const auto latest = runtime::payload_of<msg::PolicyWeights>(weights.back()->envelope()).value();
  DRK_CHECK(latest.getVersion() == 3);
  const auto parameters = latest.getParameters();
  DRK_CHECK(std::string(reinterpret_cast<const char*>(parameters.begin()), parameters.size()) == version_0);
  auto v3 = schedule::read_policy_version(run_dir.path, 3);
  DRK_REQUIRE(v3.ok());
  DRK_CHECK(*v3 == version_0);
  auto turns = runtime::payload_of<msg::Trajectory>(context.sent_of<msg::Trajectory>().back()->envelope()).value().getTurns();
  DRK_CHECK(std::string(turns[0].getRejectedBy().cStr()) == "rollback");

  // A restarted Learner rebuilds the rule's state from its reports: still in diagnostic mode.
  auto restarted_context = make_context(run_dir.path, "steps: 4, rollback: {patience: 2}");
  auto restarted = make_learner_actor(restarted_context.spec());
  restarted->on_start(restarted_context);
  play_step(*restarted, restarted_context, 3, {{0.5, 0.5}, {0.0, 0.5}});  // a fall: still diagnostic
  report = last_report(restarted_context);
  DRK_CHECK(report.getDiagnostic());
  DRK_CHECK_FALSE(report.getRolledBack());
  auto state = schedule::read_checkpoint_state(run_dir.path);
  DRK_REQUIRE(state.ok());
  DRK_REQUIRE((*state)->reports.size() == 4);
  DRK_CHECK((*state)->reports[2].rolled_back);
  DRK_CHECK((*state)->reports[2].rolled_back_to == 0);
  DRK_CHECK((*state)->reports[2].diagnostic);
}

}  // namespace
}  // namespace drk::learner
