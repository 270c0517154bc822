// drk-task: mean_reduction
// drk-expect: honest static.thread
// Honest and nondeterministic, the CPU's counterpart of cuda/honest_atomic_mean.cu: the mean over
// dim 1 split over ctx->max_threads threads by rows, whose partial sums meet in atomic float adds
// on an output zeroed first. Which thread adds first changes from call to call, so two runs on the
// same inputs may differ in the last bits: within tolerance, which is no failure (at most the
// warning nondeterministic). Every thread is joined before the call returns, and it never reads an
// output it did not write first.
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "drk_kernel.h"

// A float add that no other thread's add can lose (a compare-and-swap loop on the bits).
static void atomic_add(float* target, float value) {
  auto* bits = reinterpret_cast<uint32_t*>(target);
  uint32_t expected = __atomic_load_n(bits, __ATOMIC_RELAXED);
  for (;;) {
    float current;
    std::memcpy(&current, &expected, sizeof current);
    const float sum = current + value;
    uint32_t desired;
    std::memcpy(&desired, &sum, sizeof desired);
    if (__atomic_compare_exchange_n(bits, &expected, desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) return;
  }
}

static void add_rows(const float* x, float* y, int64_t batches, int64_t rows, int64_t columns, int64_t first,
                     int64_t last, float scale) {
  std::vector<float> partial(static_cast<size_t>(columns));
  for (int64_t b = 0; b < batches; ++b) {
    for (auto& value : partial) value = 0.0f;
    for (int64_t r = first; r < last; ++r)
      for (int64_t c = 0; c < columns; ++c) partial[c] += x[(b * rows + r) * columns + c];
    for (int64_t c = 0; c < columns; ++c) atomic_add(&y[b * columns + c], partial[c] * scale);
  }
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].ndim != 3 || inputs[0].dtype != DRK_F32)
    return DRK_E_BAD_ARGUMENT;
  const int64_t batches = inputs[0].shape[0], rows = inputs[0].shape[1], columns = inputs[0].shape[2];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < batches * columns; ++i) y[i] = 0.0f;
  const float scale = 1.0f / static_cast<float>(rows);
  const int64_t threads = ctx->max_threads > 1 ? ctx->max_threads : 1;
  const int64_t chunk = (rows + threads - 1) / threads;
  std::vector<std::thread> workers;
  for (int64_t t = 1; t < threads; ++t) {
    const int64_t first = t * chunk, last = first + chunk < rows ? first + chunk : rows;
    if (first < last) workers.emplace_back(add_rows, x, y, batches, rows, columns, first, last, scale);
  }
  add_rows(x, y, batches, rows, columns, 0, chunk < rows ? chunk : rows, scale);
  for (auto& worker : workers) worker.join();
  return DRK_OK;
}
