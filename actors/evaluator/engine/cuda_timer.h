// CudaTimer: the CUDA sandbox's timing. Every call is timed alone in the sandbox with CUDA events
// after an L2 flush (2x its size), a persisting-L2 reset and a device synchronisation; candidate
// and reference (LibTorch CUDA, in the sandbox, on the same device buffers) interleave in a
// shuffled order within each round of cuda_calls_per_round calls a side. With
// hide_launch_latency (by default for Python candidates), calls are held behind the launch hold
// (cuda/launch_hold.h) until one cannot be: then the timing starts again with launch latency
// included, so that no median mixes the two. Once the timing settles, cuda_profiled_calls a side are traced by CUPTI for the GPU
// profile (gpu_profile.h); then a few candidate calls whose outputs keep their answers
// (answerReuseRatio against the timed calls, which start from poison; a suspicious ratio measured
// again in adjacent rounds, the smallest kept), energy and hardware
// metrics. docs/gpu.md.
//
// Nothing here uses CUDA in this process: the sandbox does the device's work. Contract, ownership
// and thread-safety: Timer's (timer.h); `peaks` (the device's, when measured) outlive the timer.
// Errors: protocol_error when the sandbox answers a time request with other calls than asked.
#pragma once

#include <optional>
#include <random>

#include "actors/evaluator/engine/sandbox_session.h"
#include "actors/evaluator/engine/timer.h"

namespace drk::evaluator {

class CudaTimer final : public Timer {
 public:
  // `order_seed`: the shuffles of the sides.
  CudaTimer(SandboxSession& session, const EngineOptions& options, const std::optional<DevicePeaks>& peaks,
            uint64_t order_seed);

  uint32_t buffer_sets(uint32_t timing_sets) const override { return std::max<uint32_t>(timing_sets, 1); }
  Status time(EvaluationRun& run, TimingSamples& samples) override;

 private:
  SandboxSession& session_;
  const EngineOptions& options_;
  const std::optional<DevicePeaks>& peaks_;
  std::mt19937_64 order_rng_;
};

}  // namespace drk::evaluator
