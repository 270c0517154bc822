// drk-task: relu
// drk-expect: honest static.thread
// Honest with threads: splits the work over ctx->max_threads std::threads and joins every one
// before returning, as the ABI asks. The static check reports the thread use as a warning only,
// and the sandbox finds no thread left running.
#include <thread>
#include <vector>

#include "drk_kernel.h"

static void relu_range(const float* x, float* y, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  const int threads = ctx->max_threads > 1 ? ctx->max_threads : 1;
  const int64_t chunk = (n + threads - 1) / threads;
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; ++t) {
    int64_t begin = t * chunk, end = begin + chunk < n ? begin + chunk : n;
    if (begin < end) workers.emplace_back(relu_range, x, y, begin, end);
  }
  relu_range(x, y, 0, chunk < n ? chunk : n);
  for (auto& worker : workers) worker.join();
  return DRK_OK;
}
