// HardwareMetrics: hardware-counter metrics of every kernel some work launches, through CUPTI's
// Range Profiler API (cupti_range_profiler.h, cupti_profiler_host.h; CUDA 12.6+): auto ranges
// (one range per kernel) with kernel replay (CUPTI replays each kernel as many passes as the
// metrics need, saving and restoring the memory it writes), so `work` is submitted once.
//
// Metrics (Nsight Compute's names): DRAM throughput and SM throughput as % of peak sustained
// over the kernel's elapsed time, L2 hit rate (%), achieved occupancy (active warps as % of the
// maximum per SM).
//
// Ownership and thread-safety: one profile() at a time per process, on the thread that owns
// the current CUDA context; kernel replay serialises the kernels, so the values are for the
// kernels alone, never their timing. Must not run while another process profiles the GPU.
// Errors: Errc::unsupported naming the CUPTI call and its error when profiling is not possible
// here (no device, no permission to the counters, a chip CUPTI does not know); the work's own
// failure is returned as the work returned it.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/result.h"

namespace drk::evaluator::cuda {

struct KernelMetrics {
  std::string name;  // the range's name: with auto ranges, its index in launch order ("0", "1", ...)
  double dram_throughput_pct = 0;
  double sm_throughput_pct = 0;
  double l2_hit_rate_pct = 0;
  double achieved_occupancy_pct = 0;
};

// The metric names, in KernelMetrics' order.
const std::vector<std::string>& hardware_metric_names();

// Profiles the kernels `work` launches on the current context of device `ordinal` (at most
// max_kernels of them). `work` returns a failed Status to abort.
Result<std::vector<KernelMetrics>> profile_kernels(int ordinal, const std::function<Status()>& work,
                                                   size_t max_kernels = 64);

}  // namespace drk::evaluator::cuda
