// GeneratorActor: runs trajectories of the embedded policy (experiment.generator.backend: policy,
// the default; with `openai` make_generator_actor() makes the language-model Generator of
// llm_generator_actor.h instead). For each RolloutRequest it plays
// `turns` turns: observe -> sample a schedule (editing the previous turn's from turn 2) ->
// render a candidate -> Candidate to the Oracle -> wait for its Feedback. After the last turn
// the Trajectory (observations, decisions, behaviour log-probabilities, rewards, correctness,
// speedups and coverage) goes to the Learner.
//
// Device: the policy serves the scheduling space of experiment.device (cpu, the default:
// C++ candidates; cuda: CUDA C++ candidates, Candidate.language cuda), the key the Learner
// reads to fill the tasks' device, so that both build the same network. A request whose task
// is evaluated on another device ends at once with an empty trajectory. Turn.coverage is the
// Verdict's GPU coverage (CUPTI: own kernels' share of GPU time) on CUDA, which PRS reads; 1 on
// CPU, where all measured time is the candidate's own.
//
// Protocol duties (docs/architecture.md): requests are deduplicated by trajectory id and a
// repeated request for a finished trajectory gets the cached Trajectory again; a candidate
// without Feedback is sent again after experiment.eval_timeout_s (default 60) and whenever
// another actor restarts; Feedback for unknown or already answered candidates is ignored.
// Many trajectories run at once. The latest PolicyWeights are used for new turns; on start the
// newest checkpoint in RUN_DIR/policy/ is loaded (kernels/schedule/policy_checkpoint.h), else
// version 0, which the seed experiment.seed defines for the Learner too.
// Sampling is seeded from experiment.seed, the actor's index and the trajectory id, so a
// trajectory's decisions depend only on its feedback, not on how requests interleave.
//
// Compile ahead (experiment.compile_ahead: true; default false): each rendered candidate is
// compiled here, on a pool of experiment.eval.compile_workers threads, with the Evaluator's
// compiler, flags and cache (RUN_DIR/compile-cache), and sent once its compile is done with the
// object in Candidate.compiled (kernels/compile/compiled_artifact.h), so that the Evaluator on
// a GPU node files it into its cache instead of compiling (docs/gpu.md). A candidate that does
// not compile here is sent without one (the Evaluator compiles it and reports the error); an
// object over the size a Candidate may carry is withheld, and a node where the compiler does
// not run compiles nothing; both say so in the log. The actor looks at the compiles in flight
// every 10 ms (no other thread can wake it).
//
// Thread-safety: an actor; the runtime calls it on one thread (the pool's threads only compile).
// Errors: a malformed experiment.compile_ahead or eval.compile_workers is a fault (it throws).
#pragma once

#include <memory>
#include <vector>

#include "runtime/actor.h"
#include "runtime/topology/experiment_keys.h"

namespace drk::generator {

std::unique_ptr<runtime::Actor> make_generator_actor(const runtime::ActorSpec& spec);

// The experiment keys this actor reads (runtime/topology/experiment_keys.h), both backends'.
std::vector<runtime::ExperimentKey> generator_experiment_keys();

// The load-time check of experiment.generator.* (llm/llm_settings.h): endpoint, model, key
// sources, the prompt templates.
Status generator_experiment_check(const YAML::Node& experiment);

}  // namespace drk::generator
