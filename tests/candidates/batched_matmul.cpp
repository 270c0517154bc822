// Honest batched matrix product for the `batched_matmul` task: a is [batch, m, k], b is
// [batch, k, n], y[i] = a[i] * b[i] is [batch, m, n]. The i-k-j loop order streams rows of b
// and y.
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || inputs[0].ndim != 3 || inputs[1].ndim != 3) return DRK_E_BAD_ARGUMENT;
  const int64_t batch = inputs[0].shape[0], m = inputs[0].shape[1], k = inputs[0].shape[2], n = inputs[1].shape[2];
  if (inputs[1].shape[0] != batch || inputs[1].shape[1] != k) return DRK_E_UNSUPPORTED_SHAPE;
  const float* a = static_cast<const float*>(inputs[0].data);
  const float* b = static_cast<const float*>(inputs[1].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t p = 0; p < batch; ++p) {
    const float* ap = a + p * m * k;
    const float* bp = b + p * k * n;
    float* yp = y + p * m * n;
    for (int64_t i = 0; i < m; ++i) {
      float* row = yp + i * n;
      for (int64_t j = 0; j < n; ++j) row[j] = 0.0f;
      for (int64_t l = 0; l < k; ++l) {
        const float scale = ap[i * k + l];
        const float* brow = bp + l * n;
        for (int64_t j = 0; j < n; ++j) row[j] += scale * brow[j];
      }
    }
  }
  return DRK_OK;
}
