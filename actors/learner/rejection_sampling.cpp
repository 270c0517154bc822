#include "actors/learner/rejection_sampling.h"

#include <algorithm>
#include <cmath>

#include "base/fnv1a.h"

namespace drk::learner {

double prs_keep_probability(const PrsSettings& settings, bool correct, double coverage) {
  if (!settings.enabled || !correct) return 1.0;
  if (settings.ramp <= 0.0) return coverage >= settings.coverage_min ? 1.0 : 0.0;
  return std::clamp((coverage - settings.coverage_min) / settings.ramp, 0.0, 1.0);
}

bool prs_keeps(const PrsSettings& settings, bool correct, double coverage, double uniform_draw) {
  return uniform_draw < prs_keep_probability(settings, correct, coverage);
}

double prs_uniform_draw(uint64_t seed, std::string_view candidate_id) {
  uint64_t mixed = fnv1a_64(candidate_id) ^ (seed + 0x9e3779b97f4a7c15ULL);
  mixed = (mixed ^ (mixed >> 30)) * 0xbf58476d1ce4e5b9ULL;
  mixed = (mixed ^ (mixed >> 27)) * 0x94d049bb133111ebULL;
  mixed ^= mixed >> 31;
  return static_cast<double>(mixed >> 11) * 0x1.0p-53;
}

MrsOutcome mrs_check(const MrsSettings& settings, const std::vector<double>& log_ratios) {
  if (!settings.enabled || log_ratios.empty()) return MrsOutcome::kept;
  const double log_veto = std::log(settings.veto);
  double sum = 0.0;
  for (const double log_ratio : log_ratios) {
    if (log_ratio < log_veto) return MrsOutcome::vetoed;
    sum += log_ratio;
  }
  const double geometric_mean = std::exp(sum / static_cast<double>(log_ratios.size()));
  if (geometric_mean < settings.band_low || geometric_mean > settings.band_high) return MrsOutcome::outside_band;
  return MrsOutcome::kept;
}

}  // namespace drk::learner
