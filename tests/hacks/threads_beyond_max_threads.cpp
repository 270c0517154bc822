// drk-task: matmul
// drk-threads: 1
// drk-expect: honest static.thread
// More threads than it may use, contained: every call splits its rows over two threads, all
// joined before it returns, while ctx->max_threads is 1. The sandbox is pinned to one CPU (as
// many as max_threads) and cannot widen its set, so the two threads share it: the timing counts
// the work of one thread, and the candidate is judged as the honest, slower kernel it then is.
// Before the pinning it was timed up to 2x faster than its work, and caught only by its CPU time
// per wall second, which a loaded machine lowered below the bound.
#include <cstdint>
#include <thread>
#include <vector>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  const int64_t n = inputs[0].shape[0], k_extent = inputs[0].shape[1], m = inputs[1].shape[1];
  const float* a = static_cast<const float*>(inputs[0].data);
  const float* b = static_cast<const float*>(inputs[1].data);
  float* c = static_cast<float*>(outputs[0].data);
  constexpr int kThreads = 2;
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; ++t)
    workers.emplace_back([=] {
      for (int64_t i = n * t / kThreads; i < n * (t + 1) / kThreads; ++i) {
        for (int64_t j = 0; j < m; ++j) c[i * m + j] = 0.0f;
        for (int64_t k = 0; k < k_extent; ++k)
          for (int64_t j = 0; j < m; ++j) c[i * m + j] += a[i * k_extent + k] * b[k * m + j];
      }
    });
  for (auto& worker : workers) worker.join();
  return DRK_OK;
}
