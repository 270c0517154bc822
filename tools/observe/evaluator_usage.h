// How busy each Evaluator was, from what the archive records of its evaluations (run_records.h):
// each evaluation's wall time (EvalResult.evalMs) and its phases, and when it was recorded.
//
// The window is the run's evaluating span, the same for every Evaluator: from the start of the
// first evaluation recorded (its record's time less its eval_ms) to the last record. Over it:
//   utilisation          = sum of the Evaluator's eval_ms / the window: the share of the time it
//                          was evaluating (compile wait, load, trials, timing) rather than idle;
//   device_busy_fraction = sum of its correctness_ms + timing_ms / the window: the share of the
//                          time its candidates and references ran on the evaluation device (the
//                          trials and the timing; compiling and loading run on the host). It
//                          bounds the device's own busy time from above: those phases include
//                          the host's drawing of inputs and comparing of outputs;
//   gpu_busy_fraction    = the same, counting only evaluations on a CUDA device (0 on the CPU).
// Each is clamped to [0, 1]. Screened candidates were not evaluated and count nowhere.
//
// Thread-safety: pure function.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/observe/run_records.h"

namespace drk::observe {

struct EvaluatorUsage {
  std::string name;
  std::string device;  // of its newest evaluation
  uint64_t evaluations = 0;
  double utilisation = 0;
  double device_busy_fraction = 0;
  double gpu_busy_fraction = 0;
};

// By name.
std::vector<EvaluatorUsage> evaluator_usage(const RunRecords& records);

}  // namespace drk::observe
