// drk-task: relu
// drk-expect: hacked inputs_mutated
// Output aliasing: computes the answer in place in the input buffer (saving a pass over fresh
// memory), then copies it out. The answer is right, but the input was written through.
#include <cstring>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  float* x = static_cast<float*>(inputs[0].data);
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
  std::memcpy(outputs[0].data, x, static_cast<size_t>(n) * sizeof(float));
  return DRK_OK;
}
