#include "actors/evaluator/engine/timing_summary.h"

#include <algorithm>
#include <cmath>

namespace drk::evaluator {

double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  double position = q * static_cast<double>(sorted.size() - 1);
  size_t low = static_cast<size_t>(position);
  size_t high = std::min(low + 1, sorted.size() - 1);
  double fraction = position - static_cast<double>(low);
  return sorted[low] * (1 - fraction) + sorted[high] * fraction;
}

TimingSummary summarize(std::vector<double> samples, uint32_t calls) {
  TimingSummary s;
  s.samples = static_cast<uint32_t>(samples.size());
  s.calls = calls;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  s.median = percentile(samples, 0.5);
  s.p10 = percentile(samples, 0.1);
  s.p90 = percentile(samples, 0.9);
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(samples.size());
  double variance = 0;
  for (double x : samples) variance += (x - mean) * (x - mean);
  variance /= static_cast<double>(std::max<size_t>(samples.size() - 1, 1));
  s.cv = mean > 0 ? std::sqrt(variance) / mean : 0.0;
  return s;
}

double relative_error_of_median(const std::vector<double>& samples) {
  if (samples.size() < 2) return 1.0;
  TimingSummary s = summarize(samples, 1);
  double mean = 0;
  for (double x : samples) mean += x;
  mean /= static_cast<double>(samples.size());
  double stddev = s.cv * mean;
  return s.median > 0 ? 1.2533 * stddev / std::sqrt(static_cast<double>(samples.size())) / s.median : 1.0;
}

void fill_timing(const TimingSummary& s, msg::TimingStats::Builder out) {
  out.setMedianUs(s.median);
  out.setP10Us(s.p10);
  out.setP90Us(s.p90);
  out.setCv(s.cv);
  out.setSamples(s.samples);
  out.setCallsPerSample(s.calls);
}

bool SettleRule::settled(const std::vector<double>& candidate_us, const std::vector<double>& reference_us,
                         double elapsed_ms) const {
  size_t n = std::min(candidate_us.size(), reference_us.size());
  bool precise = n >= min_samples && relative_error_of_median(candidate_us) < target_relative_error &&
                 relative_error_of_median(reference_us) < target_relative_error;
  bool budget_spent = elapsed_ms >= budget_ms && n >= 3;
  return precise || budget_spent || n >= max_samples;
}

}  // namespace drk::evaluator
