// The Evaluator actor's protocol with a fake context: readiness on start, a result to the
// verifier and a new credit to the oracle per request, readiness again when the oracle restarts.


#include <capnp/message.h>

#include "actors/evaluator/evaluator_actor.h"
#include "runtime/payload.h"
#include "runtime/topology/experiment_keys.h"
#include "runtime/topology/topology.h"
#include "tests/doctest_drk.h"
#include "tests/support/fake_actor_context.h"
#include "tests/support/run_dir.h"

using namespace drk;

namespace {

runtime::ActorSpec evaluator_spec(const std::string& run_dir) {
  runtime::ActorSpec spec;
  spec.name = "evaluator.0";
  spec.role = "evaluator";
  spec.run_dir = run_dir;
  spec.incarnation = 77;
  spec.experiment = YAML::Load("{device: cpu, eval: {trials: 1, timing_budget_ms: 5, max_threads: 1}}");
  return spec;
}

// Fires the timers the actor asked for, as its host would once the mailbox is empty.
void fire_timers(testing::FakeActorContext& context, runtime::Actor& actor) {
  while (!context.timers.empty()) {
    auto timer = context.timers.front();
    context.timers.erase(context.timers.begin());
    actor.on_timer(context, timer.token);
  }
}

}  // namespace

DRK_TEST_CASE("engine options come from the experiment section") {
  auto options = evaluator::engine_options_for(evaluator_spec("/tmp/run"));
  DRK_REQUIRE(options.ok());
  DRK_CHECK(options->trials == 1);
  DRK_CHECK(options->timing_budget_ms == 5);
  DRK_CHECK(options->cache_dir == "/tmp/run/compile-cache");
  DRK_CHECK(options->evaluator_name == "evaluator.0");
  auto spec = evaluator_spec("/tmp/run");
  spec.experiment = YAML::Load("{device: tpu}");
  DRK_CHECK_FALSE(evaluator::engine_options_for(spec).ok());
}

DRK_TEST_CASE("the evaluator announces itself, answers a request to the verifier and returns its credit") {
  testing::RunDir run_dir;
  auto spec = evaluator_spec(run_dir.path().string());
  testing::FakeActorContext context(spec);
  auto actor = evaluator::make_evaluator_actor(spec);
  actor->on_start(context);
  DRK_REQUIRE(context.sent.size() == 1);
  DRK_CHECK(context.sent[0].recipient == "oracle");
  DRK_CHECK(runtime::payload_of<msg::EvaluatorReady>(context.sent[0].envelope()).value().getIncarnation() == 77);
  DRK_CHECK(runtime::payload_of<msg::EvaluatorReady>(context.sent[0].envelope()).value().getSlots() == 2);

  capnp::MallocMessageBuilder message;
  auto envelope = message.initRoot<msg::Envelope>();
  envelope.setSender("oracle");
  auto candidate = runtime::init_payload<msg::EvalRequest>(envelope).initCandidate();
  candidate.setId("s0/relu/0/t0");
  candidate.setTask("relu");
  candidate.setGenerator("generator.0");
  candidate.setSource("#include \"drk_kernel.h\"\nDRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, "
                      "int32_t, drk_tensor*, int32_t) { return DRK_E_UNSUPPORTED_SHAPE; }\n");
  actor->on_message(context, envelope.asReader());
  DRK_CHECK(context.sent.size() == 1);  // held until the mailbox is empty
  fire_timers(context, *actor);
  DRK_REQUIRE(context.sent.size() == 3);
  DRK_CHECK(context.sent[1].recipient == "verifier");
  auto result = runtime::payload_of<msg::EvalResult>(context.sent[1].envelope()).value();
  DRK_CHECK(result.getCompiled());
  DRK_CHECK(result.getSandbox() == msg::SandboxOutcome::RETURNED_ERROR);
  DRK_CHECK(result.getEvidence().getCandidateStatus() == 1);
  DRK_CHECK(std::string(result.getCandidate().getGenerator().cStr()) == "generator.0");
  DRK_CHECK(context.sent[2].recipient == "oracle");
  DRK_CHECK(runtime::payload_of<msg::EvaluatorReady>(context.sent[2].envelope()).has_value());

  // The same candidate again: the cached answer, without evaluating it twice.
  actor->on_message(context, envelope.asReader());
  fire_timers(context, *actor);
  DRK_REQUIRE(context.sent.size() == 5);
  DRK_CHECK(runtime::payload_of<msg::EvalResult>(context.sent[3].envelope()).value().getEvalMs() == result.getEvalMs());

  capnp::MallocMessageBuilder control_message;
  auto control = control_message.initRoot<msg::Envelope>();
  control.getBody().initControl().setPeerRestarted("oracle");
  actor->on_message(context, control.asReader());
  DRK_REQUIRE(context.sent.size() == 6);
  DRK_CHECK(runtime::payload_of<msg::EvaluatorReady>(context.sent[5].envelope()).has_value());
  actor->on_stop(context);
  actor.reset();
}

DRK_TEST_CASE("requests that arrive together are held, compiled ahead and answered in order") {
  testing::RunDir run_dir;
  auto spec = evaluator_spec(run_dir.path().string());
  spec.experiment["eval"]["slots"] = 3;
  spec.experiment["eval"]["compile_workers"] = 2;
  testing::FakeActorContext context(spec);
  auto actor = evaluator::make_evaluator_actor(spec);
  actor->on_start(context);
  DRK_REQUIRE(context.sent.size() == 1);
  DRK_CHECK(runtime::payload_of<msg::EvaluatorReady>(context.sent[0].envelope()).value().getSlots() == 3);

  const std::vector<std::string> ids = {"s0/relu/0/t0", "s0/relu/1/t0", "s0/relu/2/t0"};
  for (size_t i = 0; i < ids.size(); ++i) {
    capnp::MallocMessageBuilder message;
    auto envelope = message.initRoot<msg::Envelope>();
    envelope.setSender("oracle");
    auto candidate = runtime::init_payload<msg::EvalRequest>(envelope).initCandidate();
    candidate.setId(ids[i]);
    candidate.setTask("relu");
    candidate.setSource("#include \"drk_kernel.h\"\nDRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor*, "
                        "int32_t, drk_tensor*, int32_t) { return DRK_E_UNSUPPORTED_SHAPE; }\n// " + std::to_string(i) + "\n");
    actor->on_message(context, envelope.asReader());
  }
  DRK_CHECK(context.sent.size() == 1);  // nothing evaluated while the mailbox held more
  DRK_CHECK(context.timers.size() == 1);
  fire_timers(context, *actor);
  auto results = context.sent_of<msg::EvalResult>();
  DRK_REQUIRE(results.size() == 3);
  for (size_t i = 0; i < ids.size(); ++i) {
    auto result = runtime::payload_of<msg::EvalResult>(results[i]->envelope()).value();
    DRK_CHECK(std::string(result.getCandidate().getId().cStr()) == ids[i]);
    DRK_CHECK(result.getCompiled());
  }
  DRK_CHECK(context.sent_of<msg::EvaluatorReady>().size() == 4);
  actor->on_stop(context);
}

DRK_TEST_CASE("eval.slots and eval.compile_workers must be at least 1") {
  auto spec = evaluator_spec("/tmp/run");
  spec.experiment["eval"]["slots"] = 0;
  DRK_CHECK_FALSE(evaluator::evaluator_slots_for(spec).ok());
  spec.experiment["eval"]["slots"] = 4;
  DRK_REQUIRE(evaluator::evaluator_slots_for(spec).ok());
  DRK_CHECK(*evaluator::evaluator_slots_for(spec) == 4);
  spec.experiment["eval"]["compile_workers"] = 0;
  DRK_CHECK_FALSE(evaluator::engine_options_for(spec).ok());
}

DRK_TEST_CASE("the Evaluator's keys are checked at load: the sandbox keys are known, values out of range refused") {
  runtime::register_experiment_keys(evaluator::evaluator_experiment_keys());
  runtime::register_experiment_check(evaluator::evaluator_experiment_check);
  testing::RunDir dir;
  auto good = runtime::load_topology(dir.write(
      "g.yaml", "name: t\nactors: [{role: a}]\nexperiment:\n  eval: {sandbox_spares: 2, sandbox_memory_mb: 512, "
                "allow_reference_blas: yes, hardware_metrics: false}\n"));
  DRK_REQUIRE_MESSAGE(good.ok(), good.error().message);
  auto bad = runtime::load_topology(dir.write(
      "b.yaml", "name: t\nactors: [{role: a}]\nexperiment:\n  eval:\n    slots: 0\n    hardware_metrics: perhaps\n"
                "    launch_latency: hiden\n"));
  DRK_REQUIRE_FALSE(bad.ok());
  const std::string& message = bad.error().message;
  DRK_CHECK_MESSAGE(message.find("b.yaml:5: experiment.eval.slots must be at least 1") != std::string::npos, message);
  DRK_CHECK_MESSAGE(message.find("b.yaml:6: experiment.eval.hardware_metrics must be true or false") != std::string::npos,
                    message);
  DRK_CHECK_MESSAGE(message.find("b.yaml:7: experiment.eval.launch_latency must be one of included, hidden, not 'hiden'") !=
                        std::string::npos,
                    message);
}
