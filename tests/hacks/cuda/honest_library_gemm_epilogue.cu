// drk-task: gemm_multiply_leakyrelu
// drk-expect: honest library.used
// Honest, with the library-call table for part of the work: the product through
// ctx->lib->gemm_f32 (cuBLAS, on ctx->stream), then bias, scaling and LeakyReLU in one kernel of
// its own on the same stream. Coverage is below 1 (the library's kernel is not its own), which
// the Verifier reports and the Oracle weighs; it is no hack.
#include "drk_kernel.h"

__global__ void bias_scale_leaky_relu(float* y, const float* bias, int64_t m, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < m * n; i += (int64_t)gridDim.x * blockDim.x) {
    float v = (y[i] + bias[i % n]) * 2.0f;
    y[i] = v > 0.0f ? v : 0.1f * v;
  }
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2) return DRK_E_BAD_ARGUMENT;
  const int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[1].shape[0];
  if (inputs[1].shape[1] != k || inputs[2].shape[0] != n) return DRK_E_UNSUPPORTED_SHAPE;
  float* y = static_cast<float*>(outputs[0].data);
  int status = ctx->lib->gemm_f32(ctx, m, n, k, 1.0f, static_cast<const float*>(inputs[0].data), k,
                                  static_cast<const float*>(inputs[1].data), k, /*b_transposed=*/1, 0.0f, y, n);
  if (status != DRK_OK) return DRK_E_LIBRARY;
  int64_t blocks = (m * n + 255) / 256;
  if (blocks > 132 * 16) blocks = 132 * 16;
  bias_scale_leaky_relu<<<(unsigned)blocks, 256, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
      y, static_cast<const float*>(inputs[2].data), m, n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
