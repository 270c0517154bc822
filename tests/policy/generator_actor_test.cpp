// The Generator's handlers, driven through a fake context: turns, feedback, deduplication,
// re-sends and determinism.
#include <string>

#include "actors/generator/generator_actor.h"
#include "runtime/payload.h"
#include "kernels/schedule/observation.h"
#include "kernels/schedule/space.h"
#include "tests/doctest_drk.h"
#include "tests/support/fake_actor_context.h"
#include "tests/support/relu_rollout.h"

namespace drk::generator {
namespace {

using testing::FakeActorContext;

runtime::ActorSpec generator_spec(const std::string& device) {
  runtime::ActorSpec spec;
  spec.name = "generator.0";
  spec.role = "generator";
  spec.experiment = YAML::Load("{seed: 5, eval_timeout_s: 30, device: " + device + "}");
  return spec;
}

FakeActorContext make_context(const std::string& device = "cpu") {
  FakeActorContext context(generator_spec(device));
  context.roles = {{"oracle", {"oracle"}}, {"learner", {"learner"}}, {"generator", {"generator.0"}}};
  return context;
}

void request(runtime::Actor& actor, FakeActorContext& context, const std::string& id, uint32_t turns,
             msg::Device device = msg::Device::CPU) {
  testing::deliver(actor, context, [&](msg::Envelope::Builder envelope) {
    testing::fill_relu_rollout(runtime::init_payload<msg::RolloutRequest>(envelope), id, turns, device);
  });
}

void feedback(runtime::Actor& actor, FakeActorContext& context, const std::string& candidate, double reward,
              double gpu_coverage = -1.0) {
  testing::deliver(actor, context, [&](msg::Envelope::Builder envelope) {
    auto body = runtime::init_payload<msg::Feedback>(envelope);
    body.setCandidateId(candidate);
    body.setReward(reward);
    auto verdict = body.initVerdict();
    verdict.setHonest(true);
    verdict.getResult().setCompiled(true);
    verdict.getResult().setCorrect(true);
    verdict.getResult().setSpeedup(1.5);
    if (gpu_coverage >= 0.0) verdict.getResult().initGpu().setCoverage(gpu_coverage);
  });
}

void peer_restarted(runtime::Actor& actor, FakeActorContext& context, const std::string& name) {
  testing::deliver(actor, context, [&](msg::Envelope::Builder envelope) {
    envelope.getBody().initControl().setPeerRestarted(name);
  });
}

DRK_TEST_CASE("a trajectory plays its turns through the oracle and ends at the learner") {
  auto context = make_context();
  auto actor = make_generator_actor(context.spec());
  actor->on_start(context);
  request(*actor, context, "s0/relu/0", 2);

  auto candidates = context.sent_of<msg::Candidate>();
  DRK_REQUIRE(candidates.size() == 1);
  auto first = runtime::payload_of<msg::Candidate>(candidates[0]->envelope()).value();
  DRK_CHECK(candidates[0]->recipient == "oracle");
  DRK_CHECK(std::string(first.getId().cStr()) == "s0/relu/0/t1");
  DRK_CHECK(std::string(first.getGenerator().cStr()) == "generator.0");
  DRK_CHECK(std::string(first.getSource().cStr()).find("drk_kernel") != std::string::npos);
  DRK_CHECK(first.getSchedule().getDecisions().size() == 4);
  DRK_REQUIRE(context.timers.size() == 1);
  DRK_CHECK(context.timers[0].delay == std::chrono::milliseconds(30000));

  feedback(*actor, context, "s0/relu/0/t1", 1.25);
  candidates = context.sent_of<msg::Candidate>();
  DRK_REQUIRE(candidates.size() == 2);
  DRK_CHECK(std::string(runtime::payload_of<msg::Candidate>(candidates[1]->envelope()).value().getId().cStr()) == "s0/relu/0/t2");

  feedback(*actor, context, "s0/relu/0/t1", 9.0);  // a duplicate: ignored
  DRK_CHECK(context.sent_of<msg::Candidate>().size() == 2);

  feedback(*actor, context, "s0/relu/0/t2", 0.5);
  auto trajectories = context.sent_of<msg::Trajectory>();
  DRK_REQUIRE(trajectories.size() == 1);
  DRK_CHECK(trajectories[0]->recipient == "learner");
  auto trajectory = runtime::payload_of<msg::Trajectory>(trajectories[0]->envelope()).value();
  DRK_CHECK(std::string(trajectory.getId().cStr()) == "s0/relu/0");
  DRK_REQUIRE(trajectory.getTurns().size() == 2);
  DRK_CHECK(trajectory.getTurns()[0].getReward() == 1.25);
  DRK_CHECK(trajectory.getTurns()[1].getReward() == 0.5);
  DRK_CHECK(trajectory.getTurns()[1].getObservation().size() ==
            static_cast<unsigned>(schedule::observation_size(schedule::Device::cpu)));
  DRK_CHECK(trajectory.getTurns()[1].getActions().size() == 4);
  DRK_CHECK(trajectory.getTurns()[0].getCoverage() == 1.0);

  request(*actor, context, "s0/relu/0", 2);  // a repeated request gets the cached trajectory
  DRK_CHECK(context.sent_of<msg::Trajectory>().size() == 2);
  DRK_CHECK(context.sent_of<msg::Candidate>().size() == 2);
}

DRK_TEST_CASE("an unanswered candidate is sent again on its deadline and on a peer restart") {
  auto context = make_context();
  auto actor = make_generator_actor(context.spec());
  actor->on_start(context);
  request(*actor, context, "s0/relu/1", 1);
  request(*actor, context, "s0/relu/1", 1);  // in progress: not started twice
  DRK_REQUIRE(context.sent_of<msg::Candidate>().size() == 1);
  const std::string source = runtime::payload_of<msg::Candidate>(context.sent_of<msg::Candidate>()[0]->envelope()).value().getSource().cStr();

  actor->on_timer(context, context.timers.back().token);
  DRK_REQUIRE(context.sent_of<msg::Candidate>().size() == 2);
  auto again = runtime::payload_of<msg::Candidate>(context.sent_of<msg::Candidate>()[1]->envelope()).value();
  DRK_CHECK(std::string(again.getId().cStr()) == "s0/relu/1/t1");
  DRK_CHECK(std::string(again.getSource().cStr()) == source);

  actor->on_timer(context, 999);  // unknown token
  peer_restarted(*actor, context, "generator.0");  // itself: nothing to re-send
  DRK_CHECK(context.sent_of<msg::Candidate>().size() == 2);
  peer_restarted(*actor, context, "oracle");
  DRK_CHECK(context.sent_of<msg::Candidate>().size() == 3);

  feedback(*actor, context, "s9/unknown/0/t1", 1.0);
  DRK_CHECK(context.sent_of<msg::Trajectory>().empty());
  feedback(*actor, context, "s0/relu/1/t1", 1.0);
  DRK_CHECK(context.sent_of<msg::Trajectory>().size() == 1);
  const auto timers_before = context.sent.size();
  actor->on_timer(context, context.timers.back().token);  // answered: no re-send
  DRK_CHECK(context.sent.size() == timers_before);
}

DRK_TEST_CASE("the same seed and feedback give the same candidates whatever the interleaving") {
  auto run = [](bool interleave) {
    auto context = make_context();
    auto actor = make_generator_actor(context.spec());
    actor->on_start(context);
    if (interleave) request(*actor, context, "s0/relu/3", 2);
    request(*actor, context, "s0/relu/2", 2);
    feedback(*actor, context, "s0/relu/2/t1", 0.7);
    std::string sources;
    for (const auto* sent : context.sent_of<msg::Candidate>()) {
      auto candidate = runtime::payload_of<msg::Candidate>(sent->envelope()).value();
      if (std::string(candidate.getTrajectoryId().cStr()) == "s0/relu/2") sources += candidate.getSource().cStr();
    }
    return sources;
  };
  DRK_CHECK(run(false) == run(true));
}

DRK_TEST_CASE("on cuda, candidates are CUDA sources of the CUDA space and turns keep the verdict's coverage") {
  auto context = make_context("cuda");
  auto actor = make_generator_actor(context.spec());
  actor->on_start(context);
  request(*actor, context, "s0/relu/4", 2, msg::Device::CUDA);
  auto candidates = context.sent_of<msg::Candidate>();
  DRK_REQUIRE(candidates.size() == 1);
  auto first = runtime::payload_of<msg::Candidate>(candidates[0]->envelope()).value();
  DRK_CHECK(first.getDevice() == msg::Device::CUDA);
  DRK_CHECK(first.getLanguage() == msg::Language::CUDA);
  DRK_CHECK(std::string(first.getSource().cStr()).find("__global__") != std::string::npos);
  const auto cuda_knobs = schedule::knobs(schedule::Family::elementwise, schedule::Device::cuda);
  DRK_REQUIRE(first.getSchedule().getDecisions().size() == cuda_knobs.size());
  DRK_CHECK(std::string(first.getSchedule().getDecisions()[0].getKnob().cStr()) == cuda_knobs[0].name);

  feedback(*actor, context, "s0/relu/4/t1", 1.0, 0.25);
  feedback(*actor, context, "s0/relu/4/t2", 1.0, 0.75);
  auto trajectories = context.sent_of<msg::Trajectory>();
  DRK_REQUIRE(trajectories.size() == 1);
  auto turns = runtime::payload_of<msg::Trajectory>(trajectories[0]->envelope()).value().getTurns();
  DRK_REQUIRE(turns.size() == 2);
  DRK_CHECK(turns[0].getCoverage() == 0.25);
  DRK_CHECK(turns[1].getCoverage() == 0.75);
  DRK_CHECK(turns[1].getActions().size() == cuda_knobs.size());
  DRK_CHECK(turns[1].getObservation().size() ==
            static_cast<unsigned>(schedule::observation_size(schedule::Device::cuda)));
}

DRK_TEST_CASE("a task evaluated on another device than experiment.device ends at once, empty") {
  auto context = make_context("cpu");
  auto actor = make_generator_actor(context.spec());
  actor->on_start(context);
  request(*actor, context, "s0/relu/5", 2, msg::Device::CUDA);
  DRK_CHECK(context.sent_of<msg::Candidate>().empty());
  auto trajectories = context.sent_of<msg::Trajectory>();
  DRK_REQUIRE(trajectories.size() == 1);
  DRK_CHECK(runtime::payload_of<msg::Trajectory>(trajectories[0]->envelope()).value().getTurns().size() == 0);
}

}  // namespace
}  // namespace drk::generator
