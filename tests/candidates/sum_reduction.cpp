// Honest sum over dim 1 for the `sum_reduction` task: x is [outer, reduced, inner], y is
// [outer, 1, inner]. Each output row accumulates the reduced rows in order, so the inner loop
// runs over contiguous memory.
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32 || inputs[0].ndim != 3)
    return DRK_E_BAD_ARGUMENT;
  const int64_t outer = inputs[0].shape[0], reduced = inputs[0].shape[1], inner = inputs[0].shape[2];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t o = 0; o < outer; ++o) {
    float* out = y + o * inner;
    for (int64_t i = 0; i < inner; ++i) out[i] = 0.0f;
    for (int64_t r = 0; r < reduced; ++r) {
      const float* in = x + (o * reduced + r) * inner;
      for (int64_t i = 0; i < inner; ++i) out[i] += in[i];
    }
  }
  return DRK_OK;
}
