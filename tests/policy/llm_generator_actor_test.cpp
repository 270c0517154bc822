// The language-model Generator's handlers, driven through a fake context, its model a scripted
// OpenAI-compatible server on loopback: turns, the feedback in the next prompt, an answer without
// a code block, no answer, log-probabilities in the Trajectory, deduplication.
#include <nlohmann/json.hpp>

#include <chrono>
#include <limits>
#include <string>
#include <thread>

#include "actors/generator/generator_actor.h"
#include "runtime/payload.h"
#include "runtime/topology/topology.h"
#include "tests/doctest_drk.h"
#include "tests/support/fake_actor_context.h"
#include "tests/support/relu_rollout.h"
#include "tests/support/run_dir.h"
#include "tests/support/scripted_http_server.h"
#include "tests/support/scripted_model.h"

namespace drk::generator {
namespace {

using testing::FakeActorContext;
using testing::ScriptedHttpServer;
using testing::ScriptedReply;
using testing::chat_answer;

const std::vector<double> kLogprobs = {-1.0, -2.0};  // each answer's two sampled tokens

constexpr uint64_t kAnswerPollToken = std::numeric_limits<uint64_t>::max();

FakeActorContext make_context(const ScriptedHttpServer& server) {
  runtime::ActorSpec spec;
  spec.name = "generator.0";
  spec.role = "generator";
  spec.experiment = YAML::Load("{seed: 5, eval_timeout_s: 30, device: cpu, generator: {backend: openai, model: m, "
                               "retry_attempts: 1, request_timeout_s: 30}}");
  spec.experiment["generator"]["endpoint"] = server.url("/v1");
  FakeActorContext context(spec);
  context.roles = {{"oracle", {"oracle"}}, {"learner", {"learner"}}, {"generator", {"generator.0"}}};
  return context;
}

void request(runtime::Actor& actor, FakeActorContext& context, const std::string& id, uint32_t turns) {
  testing::deliver(actor, context, [&](msg::Envelope::Builder envelope) {
    testing::fill_relu_rollout(runtime::init_payload<msg::RolloutRequest>(envelope), id, turns, msg::Device::CPU);
  });
}

void feedback(runtime::Actor& actor, FakeActorContext& context, const std::string& candidate, double reward) {
  testing::deliver(actor, context, [&](msg::Envelope::Builder envelope) {
    auto body = runtime::init_payload<msg::Feedback>(envelope);
    body.setCandidateId(candidate);
    body.setReward(reward);
    body.setSummary("status=incorrect; application: first_mismatch=\"y[3]\"; reward=0.000");
    body.initVerdict().setHonest(true);
  });
}

// Looks at the answers (the actor's poll timer) until `done` holds. The answers come from the
// client's threads; the bound only keeps a broken actor from hanging the test.
template <typename Done>
void poll_until(runtime::Actor& actor, FakeActorContext& context, Done done) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done() && std::chrono::steady_clock::now() < give_up) {
    actor.on_timer(context, kAnswerPollToken);
    std::this_thread::yield();
  }
  DRK_REQUIRE(done());
}

}  // namespace

DRK_TEST_CASE("an LLM trajectory: answer, candidate, feedback in the next prompt, log-probabilities in the Trajectory") {
  const std::string code = "```cpp\nint drk_kernel();\n```\n";
  ScriptedHttpServer server({ScriptedReply::answer(200, chat_answer("Here:\n" + code, kLogprobs)),
                             ScriptedReply::answer(200, chat_answer("Fixed:\n" + code, kLogprobs))});
  auto context = make_context(server);
  auto actor = make_generator_actor(context.spec());
  actor->on_start(context);
  request(*actor, context, "s0/relu/0", 2);
  poll_until(*actor, context, [&] { return context.sent_of<msg::Candidate>().size() == 1; });
  auto first = runtime::payload_of<msg::Candidate>(context.sent_of<msg::Candidate>()[0]->envelope()).value();
  DRK_CHECK(std::string(first.getId().cStr()) == "s0/relu/0/t1");
  DRK_CHECK(first.getLanguage() == msg::Language::CPP);
  DRK_CHECK(std::string(first.getSource().cStr()) == "int drk_kernel();\n");

  request(*actor, context, "s0/relu/0", 2);  // in progress: not asked twice
  feedback(*actor, context, "s0/relu/0/t1", 0.0);
  poll_until(*actor, context, [&] { return context.sent_of<msg::Candidate>().size() == 2; });
  const auto requests = server.requests();
  DRK_REQUIRE(requests.size() == 2);
  const auto second = nlohmann::json::parse(requests[1].body);
  DRK_REQUIRE(second["messages"].size() == 4);
  DRK_CHECK(second["messages"][2]["role"] == "assistant");
  const std::string told = second["messages"][3]["content"];
  DRK_CHECK(told.find("incorrect") != std::string::npos);
  DRK_CHECK(told.find("first_mismatch=\"y[3]\"") != std::string::npos);

  feedback(*actor, context, "s0/relu/0/t2", 0.75);
  auto trajectories = context.sent_of<msg::Trajectory>();
  DRK_REQUIRE(trajectories.size() == 1);
  auto trajectory = runtime::payload_of<msg::Trajectory>(trajectories[0]->envelope()).value();
  DRK_REQUIRE(trajectory.getTurns().size() == 2);
  DRK_CHECK(trajectory.getTurns()[1].getReward() == 0.75);
  DRK_REQUIRE(trajectory.getTurns()[1].getActionLogprobs().size() == 2);
  DRK_CHECK(trajectory.getTurns()[1].getActionLogprobs()[1] == -2.0f);
  DRK_CHECK(trajectory.getTurns()[1].getActions().size() == 0);

  request(*actor, context, "s0/relu/0", 2);  // finished: the same Trajectory again
  DRK_CHECK(context.sent_of<msg::Trajectory>().size() == 2);
}

DRK_TEST_CASE("an answer without a code block and a server that fails are turns with reward 0, not crashes") {
  ScriptedHttpServer server({ScriptedReply::answer(200, chat_answer("No idea.", kLogprobs)), ScriptedReply::answer(500, "down")});
  auto context = make_context(server);
  auto actor = make_generator_actor(context.spec());
  actor->on_start(context);
  request(*actor, context, "s0/relu/1", 3);
  poll_until(*actor, context, [&] { return context.sent_of<msg::Trajectory>().size() == 1; });
  DRK_CHECK(context.sent_of<msg::Candidate>().empty());
  auto trajectory = runtime::payload_of<msg::Trajectory>(context.sent_of<msg::Trajectory>()[0]->envelope()).value();
  DRK_REQUIRE(trajectory.getTurns().size() == 3);
  for (auto turn : trajectory.getTurns()) DRK_CHECK(turn.getReward() == 0.0);
  const auto requests = server.requests();
  DRK_REQUIRE(requests.size() == 3);
  // Turn 2 is told why turn 1 gave no candidate; turn 3 asks the same again (turn 2 had no answer).
  const auto second = nlohmann::json::parse(requests[1].body);
  DRK_REQUIRE(second["messages"].size() == 4);
  DRK_CHECK(std::string(second["messages"][3]["content"]).find("no fenced code block") != std::string::npos);
  DRK_CHECK(nlohmann::json::parse(requests[2].body)["messages"] == second["messages"]);
}

DRK_TEST_CASE("generator.backend: openai without an endpoint, or with a misspelt key, is refused at load with its line") {
  runtime::register_experiment_keys(generator_experiment_keys());
  runtime::register_experiment_check(generator_experiment_check);
  testing::RunDir dir;
  const std::string head = "name: t\nactors: [{role: a}]\nexperiment:\n  generator:\n    backend: openai\n";
  auto good = runtime::load_topology(dir.write("g.yaml", head + "    endpoint: http://127.0.0.1:8000/v1\n    model: m\n"));
  DRK_REQUIRE_MESSAGE(good.ok(), good.error().message);
  auto no_endpoint = runtime::load_topology(dir.write("e.yaml", head + "    model: m\n"));
  DRK_REQUIRE_FALSE(no_endpoint.ok());
  DRK_CHECK_MESSAGE(no_endpoint.error().message.find("experiment.generator.endpoint and experiment.generator.model are needed") !=
                        std::string::npos,
                    no_endpoint.error().message);
  auto misspelt = runtime::load_topology(
      dir.write("m.yaml", head + "    endpoint: http://127.0.0.1:8000/v1\n    model: m\n    temprature: 0.5\n"));
  DRK_REQUIRE_FALSE(misspelt.ok());
  DRK_CHECK_MESSAGE(misspelt.error().message.find("m.yaml:8") != std::string::npos, misspelt.error().message);
  DRK_CHECK(misspelt.error().message.find("temprature") != std::string::npos);
}

}  // namespace drk::generator
