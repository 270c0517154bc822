// Honest softmax for the `softmax` task: x is [rows, cols], softmax over dim 1 (numerically
// stable: subtract the row maximum before exp).
#include <cmath>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].ndim != 2) return DRK_E_BAD_ARGUMENT;
  const int64_t rows = inputs[0].shape[0], cols = inputs[0].shape[1];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * cols;
    float* out = y + r * cols;
    float row_max = in[0];
    for (int64_t c = 1; c < cols; ++c) row_max = in[c] > row_max ? in[c] : row_max;
    float sum = 0.0f;
    for (int64_t c = 0; c < cols; ++c) {
      out[c] = std::exp(in[c] - row_max);
      sum += out[c];
    }
    const float inverse = 1.0f / sum;
    for (int64_t c = 0; c < cols; ++c) out[c] *= inverse;
  }
  return DRK_OK;
}
