#include "actors/oracle/service_times.h"

#include <algorithm>

namespace drk::oracle {

void ServiceTimes::observe_result(const std::string& evaluator, int64_t dispatched_ms, int64_t now_ms) {
  auto [it, first] = estimates_.try_emplace(evaluator);
  Estimate& estimate = it->second;
  const int64_t started_ms = std::max(dispatched_ms, estimate.last_result_ms);
  // A millisecond at least: a zero would make an evaluator look infinitely fast.
  const double service_ms = static_cast<double>(std::max<int64_t>(now_ms - started_ms, 1));
  estimate.mean_ms = first ? service_ms : (1 - kWeight) * estimate.mean_ms + kWeight * service_ms;
  estimate.last_result_ms = std::max(estimate.last_result_ms, now_ms);
}

const ServiceTimes::Estimate* ServiceTimes::estimate(const std::string& evaluator) const {
  const auto it = estimates_.find(evaluator);
  return it == estimates_.end() ? nullptr : &it->second;
}

std::optional<double> ServiceTimes::measured_ms(const std::string& evaluator) const {
  const Estimate* found = estimate(evaluator);
  if (!found) return std::nullopt;
  return found->mean_ms;
}

double ServiceTimes::expected_ms(const std::string& evaluator) const {
  if (const auto own = measured_ms(evaluator)) return *own;
  if (estimates_.empty()) return 1;
  double sum = 0;
  for (const auto& [name, estimate] : estimates_) sum += estimate.mean_ms;
  return sum / static_cast<double>(estimates_.size());
}

}  // namespace drk::oracle
