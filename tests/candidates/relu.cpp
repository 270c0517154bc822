// Honest ReLU for the `relu` task (any shape): y = max(x, 0), split over ctx->max_threads.
#include <thread>
#include <vector>

#include "drk_kernel.h"

static void relu_range(const float* x, float* y, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32) return DRK_E_BAD_ARGUMENT;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  int threads = ctx->max_threads > 1 && n >= (1 << 16) ? ctx->max_threads : 1;
  if (threads == 1) {
    relu_range(x, y, 0, n);
    return DRK_OK;
  }
  std::vector<std::thread> workers;
  int64_t chunk = (n + threads - 1) / threads;
  for (int t = 1; t < threads; ++t) {
    int64_t begin = t * chunk, end = begin + chunk < n ? begin + chunk : n;
    if (begin < end) workers.emplace_back(relu_range, x, y, begin, end);
  }
  relu_range(x, y, 0, chunk < n ? chunk : n);
  for (auto& worker : workers) worker.join();
  return DRK_OK;
}
