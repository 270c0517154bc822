// Timer: how one kind of sandbox times a correct candidate against the task's reference. The CPU
// timer (cpu_timer.h) reads this process's clock around batches of calls; the CUDA timer
// (cuda_timer.h) has the sandbox time every call with CUDA events. Both stop by the same rule
// (timing_summary.h's SettleRule from the engine's options) and leave the candidate's honesty
// measures of their kind in the result's evidence.
//
// Ownership: a timer refers to the engine's session and options, which outlive it.
// Thread-safety: the engine's thread only.
#pragma once

#include <cstdint>
#include <vector>

#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/engine/timing_summary.h"
#include "actors/evaluator/evaluation.h"
#include "base/result.h"

namespace drk::evaluator {

// Microseconds per call, one value per sample, and the calls each sample spans.
struct TimingSamples {
  std::vector<double> candidate_us, reference_us;
  uint32_t candidate_calls = 1, reference_calls = 1;
};

class Timer {
 public:
  virtual ~Timer() = default;
  // The buffer sets a run's layout needs for `timing_sets` input sets (EngineOptions::timing_sets).
  virtual uint32_t buffer_sets(uint32_t timing_sets) const = 0;
  // Times both sides over the run's buffer sets (inputs drawn, outputs poisoned) until the timing
  // settles. A candidate that fails meanwhile makes the result incorrect (errorText, sandbox) and
  // the call returns ok with the samples so far; an error is a fault (the sandbox broke the
  // protocol, the reference failed, no sandbox could be started).
  virtual Status time(EvaluationRun& run, TimingSamples& samples) = 0;
};

inline SettleRule settle_rule(const EngineOptions& options) {
  return SettleRule{options.min_samples, options.max_samples, options.target_relative_error, options.timing_budget_ms};
}

}  // namespace drk::evaluator
