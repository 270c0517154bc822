// EngineTaskEvaluator: a gateway worker's evaluator over drkernel's evaluation engine, as
// `drk eval` and `drk bench kernelbench` evaluate KernelBench-format candidates
// (tools/drk/judged_evaluation.h): the request's reference_code becomes an imported problem
// (reference_problems.h), its kernel_code the candidate (a ModelNew) judged by the Verifier, and
// the verdict a result with our Oracle's reward (evaluation_result.h).
//
// Routing by backend: pytorch and cpp candidates run on the engine's device; cuda and triton need
// a CUDA engine, and on a CPU gateway get a failed result (error_code "unsupported_backend") that
// says so.
//
// KernelGYM's per-request knobs (measurement_for): num_correct_trials sets the correctness trials,
// num_perf_trials the timed samples per side at most (a sample is a batch of calls: ~1 ms of them
// on the CPU, a round of calls on CUDA; the timing stops earlier once its medians are precise),
// timeout the seconds one sandbox call (a trial or a timed batch) may take: a candidate that hangs
// is stopped then, with error_code "timeout", num_warmup the untimed calls of each side right
// before the timed ones (beyond the engine's own warm-up: first calls, the CPU's batch
// calibration). A knob not given keeps the gateway's (drk serve --trials...). What was applied is
// in the result's metadata.measured. enable_profiling adds metadata.profile
// (evaluation_profile.h): the profile the evaluation measured, and what the device cannot give.
//
// Thread-safety: one thread per object (an engine serves one thread); the ReferenceProblems are
// shared. Errors: create() returns the engine's (a device this build cannot run, LibTorch on
// netlib's BLAS...).
#pragma once

#include <memory>

#include "actors/evaluator/evaluation.h"
#include "actors/oracle/reward.h"
#include "tools/gateway/reference_problems.h"
#include "tools/gateway/task_evaluator.h"

namespace drk::gateway {

struct EngineEvaluatorSettings {
  evaluator::EngineOptions engine;
  oracle::RewardWeights weights;
  std::shared_ptr<ReferenceProblems> references;
};

// The engine's measurement for `request`: its knobs where given, else `engine`'s options.
evaluator::Measurement measurement_for(const EvaluateRequest& request, const evaluator::EngineOptions& engine);

class EngineTaskEvaluator : public TaskEvaluator {
 public:
  static Result<std::unique_ptr<TaskEvaluator>> create(const EngineEvaluatorSettings& settings, size_t worker);
  Json evaluate(const EvaluateRequest& request) override;

 private:
  EngineTaskEvaluator(EngineEvaluatorSettings settings, std::unique_ptr<evaluator::EvaluationEngine> engine)
      : settings_(std::move(settings)), engine_(std::move(engine)) {}

  EngineEvaluatorSettings settings_;
  std::unique_ptr<evaluator::EvaluationEngine> engine_;
};

}  // namespace drk::gateway
