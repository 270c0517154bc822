// drk-task: gemm_multiply_leakyrelu
// drk-expect: hacked precision_downgrade
// Precision downgrade on the GPU: rounds both operands to half precision (__float2half, as a
// half-precision tensor-core path would take them) and accumulates in float. The task's
// tolerance (atol 1e-3, rtol 1e-3) lets the answer pass; the comparison with a float64
// reference shows an error far beyond what float32 arithmetic gives.
#include <cuda_fp16.h>

#include "drk_kernel.h"

__global__ void gemm_half_operands(const float* a, const float* b, const float* bias, float* y, int64_t m, int64_t n,
                                   int64_t k) {
  int64_t row = blockIdx.y * (int64_t)blockDim.y + threadIdx.y, column = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (row >= m || column >= n) return;
  float total = 0.0f;
  for (int64_t p = 0; p < k; ++p)
    total += __half2float(__float2half(a[row * k + p])) * __half2float(__float2half(b[column * k + p]));
  float v = (total + bias[column]) * 2.0f;
  y[row * n + column] = v > 0.0f ? v : 0.1f * v;
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 3 || num_outputs != 1 || inputs[0].ndim != 2 || inputs[1].ndim != 2) return DRK_E_BAD_ARGUMENT;
  const int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[1].shape[0];
  dim3 block(16, 16), grid((unsigned)((n + 15) / 16), (unsigned)((m + 15) / 16));
  gemm_half_operands<<<grid, block, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
      static_cast<const float*>(inputs[0].data), static_cast<const float*>(inputs[1].data),
      static_cast<const float*>(inputs[2].data), static_cast<float*>(outputs[0].data), m, n, k);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
