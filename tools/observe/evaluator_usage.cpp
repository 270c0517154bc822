#include "tools/observe/evaluator_usage.h"

#include <algorithm>
#include <limits>
#include <map>

namespace drk::observe {

std::vector<EvaluatorUsage> evaluator_usage(const RunRecords& records) {
  struct Sums {
    EvaluatorUsage usage;
    int64_t newest_ms = std::numeric_limits<int64_t>::min();
    double busy_ms = 0, device_ms = 0, gpu_ms = 0;
  };
  std::map<std::string, Sums> by_name;
  double window_start = std::numeric_limits<double>::infinity();
  double window_end = -std::numeric_limits<double>::infinity();
  for (const auto& [id, record] : records.evaluations()) {
    if (record.screened || record.evaluator.empty()) continue;
    Sums& sums = by_name[record.evaluator];
    sums.usage.name = record.evaluator;
    ++sums.usage.evaluations;
    if (record.recorded_unix_ms >= sums.newest_ms) {
      sums.newest_ms = record.recorded_unix_ms;
      sums.usage.device = record.device;
    }
    const double on_device = record.correctness_ms + record.timing_ms;
    sums.busy_ms += record.eval_ms;
    sums.device_ms += on_device;
    if (record.device == "cuda") sums.gpu_ms += on_device;
    window_start = std::min(window_start, static_cast<double>(record.recorded_unix_ms) - record.eval_ms);
    window_end = std::max(window_end, static_cast<double>(record.recorded_unix_ms));
  }
  const double window_ms = window_end - window_start;
  const auto fraction = [window_ms](double ms) { return window_ms > 0 ? std::clamp(ms / window_ms, 0.0, 1.0) : 0.0; };
  std::vector<EvaluatorUsage> usage;
  for (auto& [name, sums] : by_name) {
    sums.usage.utilisation = fraction(sums.busy_ms);
    sums.usage.device_busy_fraction = fraction(sums.device_ms);
    sums.usage.gpu_busy_fraction = fraction(sums.gpu_ms);
    usage.push_back(std::move(sums.usage));
  }
  return usage;
}

}  // namespace drk::observe
