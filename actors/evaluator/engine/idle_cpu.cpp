#include "actors/evaluator/engine/idle_cpu.h"

#include "actors/evaluator/engine/timing_summary.h"

namespace drk::evaluator {

void IdleCpu::reset() {
  cpu_ns_ = wall_ns_ = 0;
  shares_.clear();
}

void IdleCpu::add(double cpu_ns, double wall_ns) {
  cpu_ns_ += cpu_ns;
  wall_ns_ += wall_ns;
  if (wall_ns >= kMinIntervalNs) shares_.push_back(cpu_ns / wall_ns);
}

void IdleCpu::record(msg::Evidence::Builder evidence) const {
  evidence.setCpuWhileIdleMs(cpu_ns_ / 1e6);
  evidence.setIdleMs(wall_ns_ / 1e6);
  if (!shares_.empty()) evidence.setIdleCpuShare(summarize(shares_, 1).median);
}

}  // namespace drk::evaluator
