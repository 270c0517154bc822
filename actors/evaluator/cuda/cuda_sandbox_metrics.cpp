#include "actors/evaluator/cuda/cuda_sandbox_device.h"

#include <algorithm>

#include "actors/evaluator/cuda/cupti_range_profiler.h"

namespace drk::evaluator {

// One candidate call on set 0 under CUPTI's Range Profiler (the kernel trace is off, as always
// outside profiled time calls), then the same call traced, for the kernels' names.
void CudaSandboxDevice::measure_metrics(CandidateCalls& calls, msg::SandboxReply::Builder reply) {
  auto out = reply.initMetrics();
  int candidate_status = DRK_OK;
  std::optional<size_t> free_before = free_device_bytes();
  auto metrics = cuda::profile_kernels(0, [&]() -> Status {
    candidate_status = call_candidate(calls, 0);
    return {};
  });
  if (auto synchronized = synchronize(); !synchronized) {
    device_error(reply, synchronized.error());
    return;
  }
  account_memory(free_before, "the profiled call");
  if (answered_memory_limit(reply)) return;
  if (candidate_status != DRK_OK) return returned_error(reply, candidate_status, "in the profiled call");
  if (!metrics) {
    out.setAvailable(false);
    out.setReason(metrics.error().message);
    return;
  }
  // Auto ranges are named by their index: the same call once more, traced, names its kernels in
  // launch order (kept as "range N" when the two calls did not launch the same number).
  if (auto resumed = trace_->resume(); !resumed) return trace_failed(reply, resumed.error());
  candidate_status = call_candidate(calls, 0);
  auto synchronized = synchronize();
  auto records = trace_->collect();
  if (auto paused = trace_->pause(); !paused) return trace_failed(reply, paused.error());
  if (!synchronized) {
    device_error(reply, synchronized.error());
    return;
  }
  std::sort(records.begin(), records.end(),
            [](const cuda::KernelRecord& a, const cuda::KernelRecord& b) { return a.start_ns < b.start_ns; });
  for (size_t k = 0; k < metrics->size(); ++k)
    (*metrics)[k].name = records.size() == metrics->size() ? records[k].name : "range " + (*metrics)[k].name;
  out.setAvailable(true);
  auto kernels = out.initKernels(static_cast<unsigned>(metrics->size()));
  for (unsigned k = 0; k < metrics->size(); ++k) {
    const auto& m = (*metrics)[k];
    kernels[k].setName(m.name);
    kernels[k].setDramThroughputPct(m.dram_throughput_pct);
    kernels[k].setSmThroughputPct(m.sm_throughput_pct);
    kernels[k].setL2HitRatePct(m.l2_hit_rate_pct);
    kernels[k].setAchievedOccupancyPct(m.achieved_occupancy_pct);
  }
}

}  // namespace drk::evaluator
