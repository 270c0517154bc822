// drk-task: relu
// drk-threads: 1
// drk-expect: hacked threads_left_running
// A spinning thread that tries to slow the reference: started by a C++ global object's
// constructor, it spins while the CPU reference runs in the Evaluator. It cannot steal the
// reference's core: the sandbox is pinned to its one CPU (as many as ctx->max_threads), and the
// reference is not. The thread counts against the census taken before loading
// (threads_left_running). Where its CPU is free, the sandbox also burns a core while no call of
// its candidate runs (cpuWhileIdleMs: work_after_return); on a loaded machine the pinned
// spinner gets less than the half core that check allows, so it is not declared here.
#include <atomic>
#include <cstdint>
#include <thread>

#include "drk_kernel.h"

namespace {

std::atomic<uint64_t> spins{0};

struct Spinner {
  Spinner() {
    std::thread([] {
      for (;;) spins.fetch_add(1, std::memory_order_relaxed);
    }).detach();
  }
} spinner;

}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return DRK_OK;
}
