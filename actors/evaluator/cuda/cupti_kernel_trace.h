// KernelTrace: records every kernel the process runs on the GPU, through CUPTI's activity
// API: name, start and end (GPU clock, ns), grid, block, registers, shared memory, stream.
// The Evaluator uses it to prove that a candidate's own kernels ran (coverage, the
// profiling-based reward) and to cross-check its event timings.
//
// Ownership and thread-safety: CUPTI's activity state is per process, so at most one
// KernelTrace exists at a time (a second start() fails with Errc::busy). Records are
// collected by collect() on the owning thread; CUPTI fills its buffers from its own thread.
// Buffers are reused (never freed while tracing), so that handing CUPTI a buffer at a kernel
// launch costs no allocation.
// Errors: Errc::unsupported when CUPTI cannot trace here (no device or driver).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"

namespace drk::evaluator::cuda {

struct KernelRecord {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  uint16_t registers_per_thread = 0;
  int32_t static_shared_bytes = 0, dynamic_shared_bytes = 0;
  uint32_t stream_id = 0;
  uint32_t correlation_id = 0;
  double duration_us() const { return static_cast<double>(end_ns - start_ns) / 1000.0; }
};

class KernelTrace {
 public:
  static Result<std::unique_ptr<KernelTrace>> start();
  ~KernelTrace();
  KernelTrace(const KernelTrace&) = delete;
  KernelTrace& operator=(const KernelTrace&) = delete;

  // Flushes CUPTI's buffers and returns the kernels completed since the last collect().
  // The caller synchronises the device first so that every launched kernel has completed.
  std::vector<KernelRecord> collect();

  // Now, on the clock of the records' start_ns/end_ns (cuptiGetTimestamp): taken after a
  // device synchronisation before and after a call, it brackets that call's kernels, so that
  // one collect() serves many calls. Flushing between calls would put CUPTI's buffer handling
  // inside the next call.
  static uint64_t timestamp_ns();

  // Stops and restarts recording. While recording, CUPTI's concurrent-kernel mode instruments
  // every kernel: a kernel of many short blocks ran 8 % longer on the H200 (docs/gpu.md), so the
  // sandbox records only the calls it profiles and times the others untraced.
  Status pause();
  Status resume();

 private:
  KernelTrace() = default;
};

}  // namespace drk::evaluator::cuda
