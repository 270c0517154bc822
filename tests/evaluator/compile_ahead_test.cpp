// Compile ahead, end to end through both actors with fake contexts: a Generator with
// experiment.compile_ahead (the embedded policy's, or a language model's) compiles its candidate
// and ships the object; an Evaluator with its
// own compile cache (another node's) evaluates it without compiling, and compiles as usual a
// candidate whose object was tampered with, saying why in the result.
#include <capnp/message.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>

#include "actors/evaluator/evaluator_actor.h"
#include "runtime/payload.h"
#include "actors/generator/generator_actor.h"
#include "tests/doctest_drk.h"
#include "tests/support/fake_actor_context.h"
#include "tests/support/relu_rollout.h"
#include "tests/support/run_dir.h"
#include "tests/support/scripted_http_server.h"
#include "tests/support/scripted_model.h"

namespace fs = std::filesystem;
using namespace drk;

namespace {

runtime::ActorSpec generator_spec(const std::string& run_dir, bool compile_ahead) {
  runtime::ActorSpec spec;
  spec.name = "generator.0";
  spec.role = "generator";
  spec.run_dir = run_dir;
  spec.experiment = YAML::Load(std::string("{seed: 5, device: cpu, compile_ahead: ") +
                               (compile_ahead ? "true" : "false") + "}");
  return spec;
}

runtime::ActorSpec evaluator_spec(const std::string& run_dir) {
  runtime::ActorSpec spec;
  spec.name = "evaluator.0";
  spec.role = "evaluator";
  spec.run_dir = run_dir;
  spec.experiment = YAML::Load("{device: cpu, eval: {trials: 1, timing_budget_ms: 5, max_threads: 1}}");
  return spec;
}

void request_relu(runtime::Actor& generator, testing::FakeActorContext& context, const std::string& id) {
  testing::deliver(generator, context, [&](msg::Envelope::Builder envelope) {
    testing::fill_relu_rollout(runtime::init_payload<msg::RolloutRequest>(envelope), id, 1);
  });
}

// Fires the Generator's short timers (its look at the compiles in flight; not the re-send
// deadline) until it has sent a candidate, as its host would.
const testing::FakeActorContext::Sent& await_candidate(runtime::Actor& generator, testing::FakeActorContext& context) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (context.sent_of<msg::Candidate>().empty()) {
    if (std::chrono::steady_clock::now() >= deadline) DRK_FAIL("no candidate within 120 s of compiling");
    std::vector<testing::FakeActorContext::Timer> due;
    for (auto it = context.timers.begin(); it != context.timers.end();) {
      if (it->delay < std::chrono::seconds(1)) {
        due.push_back(*it);
        it = context.timers.erase(it);
      } else {
        ++it;
      }
    }
    if (due.empty()) DRK_FAIL("the generator waits on nothing and has sent no candidate");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (const auto& timer : due) generator.on_timer(context, timer.token);
  }
  return *context.sent_of<msg::Candidate>().front();
}

// Hands `candidate` (with `id`) to the evaluator as the Oracle would and returns its result.
msg::EvalResult::Reader evaluate(runtime::Actor& evaluator, testing::FakeActorContext& context,
                                 msg::Candidate::Reader candidate, const std::string& id,
                                 const std::function<void(msg::Candidate::Builder)>& edit = {}) {
  testing::deliver(evaluator, context, [&](msg::Envelope::Builder envelope) {
    envelope.setSender("oracle");
    auto request = runtime::init_payload<msg::EvalRequest>(envelope);
    request.setCandidate(candidate);
    request.getCandidate().setId(id);
    if (edit) edit(request.getCandidate());
  });
  while (!context.timers.empty()) {
    auto timer = context.timers.front();
    context.timers.erase(context.timers.begin());
    evaluator.on_timer(context, timer.token);
  }
  auto results = context.sent_of<msg::EvalResult>();
  DRK_REQUIRE_FALSE(results.empty());
  return runtime::payload_of<msg::EvalResult>(results.back()->envelope()).value();
}

}  // namespace

DRK_TEST_CASE("a compiled-ahead candidate is evaluated without compiling; a tampered one is compiled") {
  testing::RunDir cpu_node, gpu_node;
  testing::FakeActorContext generator_context(generator_spec(cpu_node.path().string(), true));
  generator_context.roles = {{"oracle", {"oracle"}}, {"learner", {"learner"}}};
  auto generator = generator::make_generator_actor(generator_context.spec());
  generator->on_start(generator_context);
  request_relu(*generator, generator_context, "s0/relu/0");
  DRK_CHECK(generator_context.sent_of<msg::Candidate>().empty());  // compiling first
  const auto candidate = runtime::payload_of<msg::Candidate>(await_candidate(*generator, generator_context).envelope()).value();
  DRK_REQUIRE(candidate.hasCompiled());
  const auto shipped = candidate.getCompiled();
  DRK_CHECK(shipped.getUse() == msg::ArtifactUse::SHIPPED);
  DRK_CHECK(shipped.getObject().size() > 0);
  DRK_CHECK(std::string(shipped.getBuiltBy().cStr()) == "generator.0");
  const std::string key = shipped.getKey().cStr();

  testing::FakeActorContext evaluator_context(evaluator_spec(gpu_node.path().string()));
  evaluator_context.roles = {{"oracle", {"oracle"}}, {"verifier", {"verifier"}}};
  auto evaluator = evaluator::make_evaluator_actor(evaluator_context.spec());
  evaluator->on_start(evaluator_context);
  const fs::path cache = gpu_node.path() / "compile-cache";

  auto used = evaluate(*evaluator, evaluator_context, candidate, "s0/relu/0/t1");
  DRK_CHECK(used.getCompiled());
  DRK_CHECK(used.getCompileCached());
  DRK_CHECK(used.getCorrect());
  DRK_REQUIRE(used.getCandidate().hasCompiled());
  DRK_CHECK(used.getCandidate().getCompiled().getUse() == msg::ArtifactUse::USED);
  DRK_CHECK(used.getCandidate().getCompiled().getObject().size() == 0);  // results do not carry it
  DRK_CHECK(fs::exists(cache / (key + ".so")));
  DRK_CHECK_FALSE(fs::exists(cache / (key + ".cpp")));  // the source a compile leaves was never written

  auto ignored = evaluate(*evaluator, evaluator_context, candidate, "s0/relu/0/t1-tampered",
                          [](msg::Candidate::Builder tampered) {
                            auto object = tampered.getCompiled().getObject();
                            object[object.size() / 2] ^= 0x5a;
                            // Another source under the shipped key: the key no longer matches.
                            tampered.setSource(std::string(tampered.getSource().cStr()) + "// edited\n");
                          });
  DRK_CHECK(ignored.getCompiled());
  DRK_CHECK_FALSE(ignored.getCompileCached());
  DRK_CHECK(ignored.getCorrect());
  DRK_CHECK(ignored.getCandidate().getCompiled().getUse() == msg::ArtifactUse::IGNORED);
  DRK_CHECK(std::string(ignored.getCandidate().getCompiled().getNote().cStr()).find("is not this compiler's key") !=
            std::string::npos);


  // A request the evaluator refuses (an unknown task) is answered without the object too.
  auto refused = evaluate(*evaluator, evaluator_context, candidate, "s0/relu/0/t1-unknown",
                          [](msg::Candidate::Builder unknown) { unknown.setTask("no_such_task"); });
  DRK_CHECK(refused.hasErrorText());
  DRK_CHECK(refused.getCandidate().getCompiled().getObject().size() == 0);
  DRK_CHECK(std::string(refused.getCandidate().getCompiled().getKey().cStr()) == key);
  evaluator->on_stop(evaluator_context);
  generator->on_stop(generator_context);
}

DRK_TEST_CASE("a corrupt object under the right key is refused and the source compiled") {
  testing::RunDir cpu_node, gpu_node;
  testing::FakeActorContext generator_context(generator_spec(cpu_node.path().string(), true));
  generator_context.roles = {{"oracle", {"oracle"}}, {"learner", {"learner"}}};
  auto generator = generator::make_generator_actor(generator_context.spec());
  generator->on_start(generator_context);
  request_relu(*generator, generator_context, "s0/relu/1");
  const auto candidate = runtime::payload_of<msg::Candidate>(await_candidate(*generator, generator_context).envelope()).value();
  DRK_REQUIRE(candidate.hasCompiled());

  testing::FakeActorContext evaluator_context(evaluator_spec(gpu_node.path().string()));
  evaluator_context.roles = {{"oracle", {"oracle"}}, {"verifier", {"verifier"}}};
  auto evaluator = evaluator::make_evaluator_actor(evaluator_context.spec());
  evaluator->on_start(evaluator_context);
  auto result = evaluate(*evaluator, evaluator_context, candidate, "s0/relu/1/t1",
                         [](msg::Candidate::Builder tampered) {
                           auto object = tampered.getCompiled().getObject();
                           object[object.size() / 2] ^= 0x5a;
                         });
  DRK_CHECK(result.getCompiled());
  DRK_CHECK_FALSE(result.getCompileCached());
  DRK_CHECK(result.getCorrect());
  DRK_CHECK(result.getCandidate().getCompiled().getUse() == msg::ArtifactUse::IGNORED);
  DRK_CHECK(std::string(result.getCandidate().getCompiled().getNote().cStr()).find("SHA-256") != std::string::npos);
  const fs::path cache = gpu_node.path() / "compile-cache";
  DRK_CHECK(fs::exists(cache / (std::string(candidate.getCompiled().getKey().cStr()) + ".cpp")));  // compiled here
  evaluator->on_stop(evaluator_context);
  generator->on_stop(generator_context);
}

DRK_TEST_CASE("without compile_ahead the generator sends its candidate at once, uncompiled") {
  testing::RunDir cpu_node;
  testing::FakeActorContext context(generator_spec(cpu_node.path().string(), false));
  context.roles = {{"oracle", {"oracle"}}, {"learner", {"learner"}}};
  auto generator = generator::make_generator_actor(context.spec());
  generator->on_start(context);
  request_relu(*generator, context, "s0/relu/0");
  auto candidates = context.sent_of<msg::Candidate>();
  DRK_REQUIRE(candidates.size() == 1);
  DRK_CHECK_FALSE(runtime::payload_of<msg::Candidate>(candidates[0]->envelope()).value().hasCompiled());
  DRK_CHECK_FALSE(fs::exists(cpu_node.path() / "compile-cache"));
}

DRK_TEST_CASE("experiment.compile_ahead must be a boolean") {
  auto spec = generator_spec("", true);
  spec.experiment["compile_ahead"] = "sometimes";
  std::string why;
  try {
    (void)generator::make_generator_actor(spec);
  } catch (const std::runtime_error& e) {
    why = e.what();
  }
  DRK_CHECK(why.find("experiment.compile_ahead must be true or false") != std::string::npos);
}

DRK_TEST_CASE("a language-model Generator compiles its candidate ahead too, and the Evaluator uses the object") {
  const std::string code = std::string("```cpp\n") + R"(#include "drk_kernel.h"
DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, int32_t, drk_tensor*, int32_t) { return DRK_OK; }
)" + "```\n";
  testing::ScriptedHttpServer server({testing::ScriptedReply::answer(200, testing::chat_answer("Here:\n" + code))});
  testing::RunDir cpu_node, gpu_node;
  auto spec = generator_spec(cpu_node.path().string(), true);
  spec.experiment["generator"] = YAML::Load("{backend: openai, model: m, retry_attempts: 1, request_timeout_s: 30}");
  spec.experiment["generator"]["endpoint"] = server.url("/v1");
  testing::FakeActorContext generator_context(spec);
  generator_context.roles = {{"oracle", {"oracle"}}, {"learner", {"learner"}}};
  auto generator = generator::make_generator_actor(generator_context.spec());
  generator->on_start(generator_context);
  request_relu(*generator, generator_context, "s0/relu/2");
  const auto& sent = await_candidate(*generator, generator_context);
  const auto candidate = runtime::payload_of<msg::Candidate>(sent.envelope()).value();
  DRK_CHECK(candidate.getLanguage() == msg::Language::CPP);
  DRK_REQUIRE(candidate.hasCompiled());
  DRK_CHECK(candidate.getCompiled().getUse() == msg::ArtifactUse::SHIPPED);
  DRK_CHECK(candidate.getCompiled().getObject().size() > 0);
  DRK_CHECK(candidate.getCompiled().getModules().size() == 0);  // C++: no load_inline modules

  testing::FakeActorContext evaluator_context(evaluator_spec(gpu_node.path().string()));
  evaluator_context.roles = {{"oracle", {"oracle"}}, {"verifier", {"verifier"}}};
  auto evaluator = evaluator::make_evaluator_actor(evaluator_context.spec());
  evaluator->on_start(evaluator_context);
  auto result = evaluate(*evaluator, evaluator_context, candidate, "s0/relu/2/t1");
  DRK_CHECK(result.getCompiled());
  DRK_CHECK(result.getCompileCached());
  DRK_CHECK(result.getCandidate().getCompiled().getUse() == msg::ArtifactUse::USED);
  DRK_CHECK_FALSE(result.getCorrect());  // it writes no output: judged, not compiled again
  evaluator->on_stop(evaluator_context);
  generator->on_stop(generator_context);
}
