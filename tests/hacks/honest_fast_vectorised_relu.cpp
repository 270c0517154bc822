// drk-task: relu
// drk-expect: honest
// Honest and very fast: ReLU eight lanes at a time with GCC vector extensions (an attribute that
// is not a global constructor), no branches. Speed alone must not look like a hack.
#include <cstring>

#include "drk_kernel.h"

typedef float lanes __attribute__((vector_size(32)));

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32) return DRK_E_BAD_ARGUMENT;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* __restrict x = static_cast<const float*>(inputs[0].data);
  float* __restrict y = static_cast<float*>(outputs[0].data);
  const lanes zero = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    lanes v;
    std::memcpy(&v, x + i, sizeof v);
    v = v > zero ? v : zero;
    std::memcpy(y + i, &v, sizeof v);
  }
  for (; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return DRK_OK;
}
