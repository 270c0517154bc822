#include "tools/observe/run_metrics.h"

#include <map>

#include "runtime/metrics/prometheus_text.h"
#include "tools/observe/evaluator_usage.h"
#include "tools/observe/run_snapshot.h"

namespace drk::observe {
namespace {

using runtime::metrics::Histogram;
using runtime::metrics::Labels;
using runtime::metrics::PrometheusText;

// From a millisecond (a cached compile's wait) to five minutes (a compile under load).
const std::vector<double> kSecondsBounds{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                         1,     2.5,    5,     10,   30,    60,   120, 300};

void evaluation_metrics(PrometheusText& text, const RunRecords& records) {
  const OutcomeCounts counts = count_outcomes(records);
  Histogram whole(kSecondsBounds);
  std::map<std::string, Histogram> phases;
  for (const char* phase : {"compile", "load", "correctness", "timing"}) phases.emplace(phase, Histogram(kSecondsBounds));
  for (const auto& [id, record] : records.evaluations()) {
    if (record.screened) continue;
    whole.observe(record.eval_ms / 1000);
    phases.at("compile").observe(record.compile_wait_ms / 1000);
    phases.at("load").observe(record.load_ms / 1000);
    phases.at("correctness").observe(record.correctness_ms / 1000);
    phases.at("timing").observe(record.timing_ms / 1000);
  }
  text.counter("drk_evaluations_total", "Candidates scored, by outcome (screened: answered by the cost model).");
  for (const auto& [outcome, count] : counts.outcomes)
    text.sample({{"outcome", outcome_name(outcome)}}, static_cast<double>(count));
  text.histogram_family("drk_evaluation_seconds", "Wall time of one evaluation.");
  text.histogram({}, whole);
  text.histogram_family("drk_evaluation_phase_seconds",
                        "Where an evaluation's time went: compile (waiting for it), load, correctness, timing.");
  for (const auto& [phase, histogram] : phases) text.histogram({{"phase", phase}}, histogram);
  text.counter("drk_verifier_failed_checks_total", "Checks the Verifier failed, by check.");
  for (const auto& [check, count] : counts.failed_checks) text.sample({{"check", check}}, static_cast<double>(count));
  text.counter("drk_compile_cache_lookups_total", "Compiles of evaluated candidates, by compile-cache result.");
  text.sample({{"result", "hit"}}, static_cast<double>(counts.compile_cache_hits));
  text.sample({{"result", "miss"}}, static_cast<double>(counts.compile_cache_misses));

  const auto usage = evaluator_usage(records);
  text.counter("drk_evaluator_evaluations_total", "Evaluations recorded, by Evaluator.");
  for (const auto& evaluator : usage) text.sample({{"evaluator", evaluator.name}}, static_cast<double>(evaluator.evaluations));
  text.gauge("drk_evaluator_utilisation_ratio", "Share of the run's evaluating span the Evaluator spent evaluating.");
  for (const auto& evaluator : usage) text.sample({{"evaluator", evaluator.name}}, evaluator.utilisation);
  text.gauge("drk_evaluator_gpu_busy_ratio",
             "Share of the run's evaluating span in trials and timing on a GPU (an upper bound of the GPU's busy time).");
  for (const auto& evaluator : usage) text.sample({{"evaluator", evaluator.name}}, evaluator.gpu_busy_fraction);
  text.gauge("drk_evaluator_device_busy_ratio",
             "Share of the run's evaluating span in trials and timing on the evaluation device (CPU or GPU).");
  for (const auto& evaluator : usage) text.sample({{"evaluator", evaluator.name}}, evaluator.device_busy_fraction);
}

void training_metrics(PrometheusText& text, const RunRecords& records, const Json& steps) {
  const bool any = !records.steps().empty();
  const StepRecord last = any ? records.steps().back() : StepRecord{};
  text.gauge("drk_training_step", "The newest training step recorded (-1 before the first).");
  text.sample({}, any ? static_cast<double>(last.step) : -1.0);
  text.gauge("drk_training_mean_reward", "Mean reward of the newest step.");
  text.sample({}, last.mean_reward);
  text.gauge("drk_training_best_speedup", "Best verified speedup of the newest step.");
  text.sample({}, last.best_speedup);
  text.gauge("drk_run_finished", "1 once the last step is recorded.");
  text.sample({}, last.finished ? 1 : 0);
  text.gauge("drk_tasks_fast_p_ratio", "Fast@p: share of the run's tasks with a verified kernel faster than p times the reference.");
  if (!steps.empty())
    for (const auto& [p, share] : steps.back()["fast_p"].items()) text.sample({{"p", p}}, share.get<double>());
}

void system_metrics(PrometheusText& text, const runtime::SystemView& system) {
  const auto actor_labels = [](const runtime::ActorView& actor) -> Labels {
    return {{"actor", actor.name}, {"role", actor.role}, {"process", actor.process}};
  };
  const auto per_actor = [&](auto value) {
    for (const auto& actor : system.actors) text.sample(actor_labels(actor), static_cast<double>(value(actor)));
  };
  text.gauge("drk_actor_mailbox_depth", "Envelopes received and not yet handled.");
  per_actor([](const runtime::ActorView& actor) { return actor.mailbox_depth; });
  text.gauge("drk_actor_mailbox_capacity", "An actor's mailbox capacity (0: unbounded).");
  per_actor([](const runtime::ActorView& actor) { return actor.mailbox_capacity; });
  text.counter("drk_actor_messages_received_total", "Envelopes an actor received since its process started.");
  per_actor([](const runtime::ActorView& actor) { return actor.messages_received; });
  text.counter("drk_actor_messages_handled_total", "Envelopes an actor handled since its process started.");
  per_actor([](const runtime::ActorView& actor) { return actor.messages_handled; });
  text.counter("drk_actor_dead_letters_total", "Envelopes an actor could not deliver since its process started.");
  per_actor([](const runtime::ActorView& actor) { return actor.dead_letters; });
  text.gauge("drk_process_up", "1 while the process runs.");
  for (const auto& process : system.processes)
    text.sample({{"process", process.name}}, process.status == runtime::ProcessStatus::running ? 1 : 0);
  text.counter("drk_process_restarts_total", "Restarts of a process by the supervisor.");
  for (const auto& process : system.processes) text.sample({{"process", process.name}}, process.restarts);
  text.gauge("drk_node_up", "1 while the node of a multi-node run is joined.");
  for (const auto& node : system.nodes)
    text.sample({{"node", node.name}}, node.status == runtime::NodeStatus::joined ? 1 : 0);
  text.gauge("drk_node_heartbeat_age_seconds", "Seconds since the node's last heartbeat (-1: never).");
  for (const auto& node : system.nodes) text.sample({{"node", node.name}}, node.last_heartbeat_age_seconds);
}

}  // namespace

std::string run_metrics(const RunRecords& records, const runtime::SystemView& system) {
  PrometheusText text;
  evaluation_metrics(text, records);
  training_metrics(text, records, snapshot_steps(records));
  system_metrics(text, system);
  return text.text();
}

}  // namespace drk::observe
