// ServiceTimes: the Oracle's estimate of how long each Evaluator takes per evaluation, measured
// at the Oracle from its own send and receive times (no message carries it), which
// EvaluationQueue dispatches by: a request goes where it is expected to finish first, (held + 1)
// x the mean.
//
// A result's service time is from when its Evaluator could start on it to when its result came
// back: max(its dispatch, that Evaluator's previous result), since an Evaluator evaluates the
// requests it holds one at a time (their compiles overlap; docs/gpu.md, "Compile pool"). The
// estimate is an exponentially weighted mean (weight `kWeight` for the newest), so a GPU that
// slows down (a bigger task, a throttled clock) is followed within a few results.
//
// An Evaluator not yet measured is expected at the mean of the measured ones (a new GPU of the
// same machine is more likely like them than not), and with none measured all are alike.
//
// Thread-safety: none; owned by the Oracle's thread. An Estimate's address stays valid for the
// ServiceTimes' life (estimates are never removed), so that a caller may keep it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace drk::oracle {

class ServiceTimes {
 public:
  static constexpr double kWeight = 0.25;

  struct Estimate {
    double mean_ms = 0;
    int64_t last_result_ms = 0;
  };

  // A result of `evaluator` arrived at `now_ms` for a request dispatched at `dispatched_ms`.
  void observe_result(const std::string& evaluator, int64_t dispatched_ms, int64_t now_ms);

  // The evaluator's estimate; nullptr until it has a result.
  const Estimate* estimate(const std::string& evaluator) const;
  // The evaluator's mean service time in ms; nullopt until it has a result.
  std::optional<double> measured_ms(const std::string& evaluator) const;
  // The mean service time to plan with: the evaluator's own, else the mean of the measured
  // others, else 1 (nothing measured: every evaluator alike).
  double expected_ms(const std::string& evaluator) const;

 private:
  std::map<std::string, Estimate> estimates_;
};

}  // namespace drk::oracle
