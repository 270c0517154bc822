// EvaluationTimeModel: how long a simulated Evaluator takes for one candidate, drawn from a
// lognormal distribution fitted to measured per-candidate evaluation times.
//
// Where the default comes from (docs/benchmarks.md): the single-candidate processing times on
// the H200 of sessions 18 and 19 (KernelGYM's API: 84.0, 11.8, 9.7 and 14.9 s; `drk eval` of the
// Triton ReLU: 24 and 21 s wall). The maximum-likelihood lognormal of those six has
// mu = 3.016 (median 20.4 s) and sigma = 0.772. `time_scale` multiplies every draw: the scale
// benchmark runs with evaluations shorter than measured (0.1: median 2.04 s), so that one head
// sees ten times the request rate it would at the measured times, in a run of seconds.
//
// Thread-safety: none (one per thread; it owns its random engine).
#pragma once

#include <cstdint>
#include <random>

namespace drk::bench {

struct EvaluationTimeFit {
  double mu = 3.016;    // of ln(seconds)
  double sigma = 0.772;
};

class EvaluationTimeModel {
 public:
  EvaluationTimeModel(EvaluationTimeFit fit, double time_scale, uint64_t seed)
      : distribution_(fit.mu, fit.sigma), time_scale_(time_scale), random_(seed) {}

  // One evaluation's duration in milliseconds.
  double draw_ms() { return 1000.0 * time_scale_ * distribution_(random_); }

 private:
  std::lognormal_distribution<double> distribution_;
  double time_scale_;
  std::mt19937_64 random_;
};

}  // namespace drk::bench
