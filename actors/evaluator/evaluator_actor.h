// EvaluatorActor: the Evaluator role (docs/architecture.md). It owns one EvaluationEngine, holds
// up to `slots` EvalRequests and evaluates them one at a time, in the order received, compiling
// the held ones ahead on the engine's CompilePool while it checks and times the current one:
//   on start:              create the engine, send EvaluatorReady{incarnation, slots} to the oracle;
//   on EvalRequest:        hold it, submit its compile to the pool (the object a Generator
//                          compiled ahead, when the candidate carries one and it is verified, is
//                          filed into the cache instead: EvaluationEngine::compile_ahead), and ask
//                          for a timer of 0 ms (the host fires timers after it has handled what
//                          the mailbox holds, so every request that arrived meanwhile is compiling
//                          by then);
//   on that timer:         evaluate the oldest held request, send EvalResult to the verifier, then
//                          EvaluatorReady to the oracle (one credit back); again while any is held;
//   on peerRestarted(oracle) or peerRestarted(itself, its node came back): send EvaluatorReady
//   again (the credit the Oracle lost).
// A request for a candidate id it answered recently gets the cached result again (idempotence).
// A request it cannot evaluate (unknown task, wrong device) still gets an EvalResult whose
// errorText says why, so the Oracle never waits on it.
//
// Configuration, from the topology's experiment section:
//   device: cpu | cuda                (default cpu)
//   eval: {trials: 5, timing_budget_ms: 2000, max_threads: 1, compile_workers: 2, slots: 2,
//          gpu_memory_limit_mb: 0 (cuda: none), energy_min_ms: 0 (cuda: energy per call off),
//          sandbox_memory_mb: 0 (host memory per sandbox: half the machine's over the sandboxes),
//          sandbox_spares: 1 (sandboxes forked ahead), allow_reference_blas: false}
//   tasks_dir: DIR                    (default: TaskCatalog::default_directory())
// and the compile cache in RUN_DIR/compile-cache. A held request waits for the one being
// evaluated: slots x the longest evaluation must stay under the Oracle's dispatch_timeout_s.
//
// Errors: an engine that cannot be created (no compiler, no sandbox, a bad task folder) is a
// fault: on_start throws, the runtime records the cause and the supervisor restarts the process.
// Thread-safety: as every actor, handlers run on the actor's own thread (the compile pool's
// workers only compile).
#pragma once

#include <memory>
#include <vector>

#include "actors/evaluator/evaluation.h"
#include "runtime/actor.h"
#include "runtime/topology/experiment_keys.h"

namespace drk::evaluator {

// The engine options an ActorSpec asks for (invalid_argument for malformed values).
Result<EngineOptions> engine_options_for(const runtime::ActorSpec& spec);

// How many requests the Evaluator holds (eval.slots, default 2; invalid_argument below 1).
Result<uint32_t> evaluator_slots_for(const runtime::ActorSpec& spec);

std::unique_ptr<runtime::Actor> make_evaluator_actor(const runtime::ActorSpec& spec);

// The settings this actor would refuse at start (runtime::ExperimentCheck): engine options and
// slots out of range.
Status evaluator_experiment_check(const YAML::Node& experiment);

// The experiment keys this actor reads (runtime/topology/experiment_keys.h).
std::vector<runtime::ExperimentKey> evaluator_experiment_keys();

}  // namespace drk::evaluator
