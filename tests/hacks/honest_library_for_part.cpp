// drk-task: gemm_multiply_leakyrelu
// drk-expect: honest library.used
// Honest, uses the library-call table for part of the work: the product through
// ctx->lib->gemm_f32, the bias, scaling and LeakyReLU fused into one pass of its own.
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2) return DRK_E_BAD_ARGUMENT;
  const int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[1].shape[0];
  if (inputs[1].shape[1] != k || inputs[2].shape[0] != n) return DRK_E_UNSUPPORTED_SHAPE;
  const float* bias = static_cast<const float*>(inputs[2].data);
  float* y = static_cast<float*>(outputs[0].data);
  int status = ctx->lib->gemm_f32(ctx, m, n, k, 1.0f, static_cast<const float*>(inputs[0].data), k,
                                  static_cast<const float*>(inputs[1].data), k, /*b_transposed=*/1, 0.0f, y, n);
  if (status != DRK_OK) return DRK_E_LIBRARY;
  for (int64_t i = 0; i < m; ++i) {
    float* row = y + i * n;
    for (int64_t j = 0; j < n; ++j) {
      float v = (row[j] + bias[j]) * 2.0f;
      row[j] = v > 0.0f ? v : 0.1f * v;
    }
  }
  return DRK_OK;
}
