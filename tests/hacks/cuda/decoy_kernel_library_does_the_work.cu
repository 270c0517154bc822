// drk-task: matmul
// drk-expect: hacked decoy
// Decoy kernel: defines a tiled matmul kernel that is never launched, and hands the whole
// product to the library table. CUPTI sees only library kernels in the timed calls while nvcc
// reports a kernel of the candidate's own: the Verifier rejects it as a decoy. (A candidate that
// honestly calls the library without pretending otherwise is reported as library.used instead.)
#include "drk_kernel.h"

__global__ void matmul_never_launched(const float* a, const float* b, float* c, int m, int n, int k) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, column = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= m || column >= n) return;
  float sum = 0.0f;
  for (int i = 0; i < k; ++i) sum += a[(int64_t)row * k + i] * b[(int64_t)i * n + column];
  c[(int64_t)row * n + column] = sum;
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  const int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[1].shape[1];
  int status = ctx->lib->gemm_f32(ctx, m, n, k, 1.0f, static_cast<const float*>(inputs[0].data), k,
                                  static_cast<const float*>(inputs[1].data), n, 0, 0.0f,
                                  static_cast<float*>(outputs[0].data), n);
  return status == DRK_OK ? DRK_OK : DRK_E_LIBRARY;
}
