// TimingSummary: the statistics of one side's timing samples (microseconds per call), and the
// rule that ends a timing phase on any device.
//
// Percentiles interpolate linearly between the sorted samples; cv is the sample standard
// deviation over the mean (n - 1 in the variance, 0 for one sample or a zero mean). The
// standard error of the median uses the normal approximation 1.2533 sigma / sqrt(n).
//
// Thread-safety: pure functions. Errors: none; an empty sample list summarises to zeros.
#pragma once

#include <cstdint>
#include <vector>

#include "messages/drk.capnp.h"

namespace drk::evaluator {

struct TimingSummary {
  double median = 0, p10 = 0, p90 = 0, cv = 0;
  uint32_t samples = 0;
  uint32_t calls = 0;  // calls per sample
};

// The q-quantile (0 <= q <= 1) of `sorted` (ascending); 0 when it is empty.
double percentile(const std::vector<double>& sorted, double q);

TimingSummary summarize(std::vector<double> samples, uint32_t calls);

// The standard error of the samples' median over the median; 1.0 (no precision) for fewer than
// two samples or a zero median.
double relative_error_of_median(const std::vector<double>& samples);

void fill_timing(const TimingSummary& summary, msg::TimingStats::Builder out);

// When a timing phase stops: both medians' standard error under `target_relative_error` with at
// least `min_samples` a side; or the budget spent with 3 samples a side at least; or
// `max_samples` a side.
struct SettleRule {
  uint32_t min_samples = 5;
  uint32_t max_samples = 200;
  double target_relative_error = 0.01;
  double budget_ms = 2000;

  bool settled(const std::vector<double>& candidate_us, const std::vector<double>& reference_us,
               double elapsed_ms) const;
};

}  // namespace drk::evaluator
