// GET /metrics of a run: Prometheus's text format (runtime/metrics/prometheus_text.h) from what
// the archive recorded (run_records.h) and what the head sees live (runtime::SystemView).
// docs/dashboard.md's table names every metric; in short:
//   drk_evaluations_total{outcome}                    counter: evaluations by outcome
//   drk_evaluation_seconds                            histogram: an evaluation's wall time
//   drk_evaluation_phase_seconds{phase}               histogram: compile (the wait for the compile),
//                                                     load, correctness, timing
//   drk_verifier_failed_checks_total{check}           counter
//   drk_compile_cache_lookups_total{result}           counter: hit | miss
//   drk_evaluator_evaluations_total{evaluator}        counter
//   drk_evaluator_utilisation_ratio{evaluator}, drk_evaluator_gpu_busy_ratio{evaluator},
//   drk_evaluator_device_busy_ratio{evaluator}        gauges (evaluator_usage.h)
//   drk_training_step, drk_training_mean_reward, drk_training_best_speedup, drk_run_finished,
//   drk_tasks_fast_p_ratio{p}                         gauges of the newest step
//   drk_actor_mailbox_depth{actor,role,process}, drk_actor_mailbox_capacity{...}   gauges
//   drk_actor_messages_received_total{...}, drk_actor_messages_handled_total{...},
//   drk_actor_dead_letters_total{...}                 counters (reset when the actor's process restarts)
//   drk_process_up{process}, drk_process_restarts_total{process}
//   drk_node_up{node}, drk_node_heartbeat_age_seconds{node}
// Counters from the archive only grow while the run lasts; those from actors start again with
// their process, which Prometheus's rate() reads as a reset.
//
// Thread-safety: pure function.
#pragma once

#include <string>

#include "runtime/inspection/inspection_view.h"
#include "tools/observe/run_records.h"

namespace drk::observe {

std::string run_metrics(const RunRecords& records, const runtime::SystemView& system);

}  // namespace drk::observe
