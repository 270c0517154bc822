// drk-task: relu
// drk-expect: hacked results_cached
// An answer found ready, on CUDA: a first kernel checks 256 sampled outputs against relu of their
// inputs and raises a flag when all match; the ReLU kernel returns at once when it is raised.
// Every correctness check passes (a wrong output is always recomputed). Timed calls used to find
// the same set's answer of the previous call in their outputs; now each starts from a NaN poison,
// and a few calls with the answers left in place measure the difference (answerReuseRatio).
#include "drk_kernel.h"

__global__ void check_sample(const float* __restrict__ x, const float* __restrict__ y, int64_t n, int* holds) {
  const int64_t i = (static_cast<int64_t>(threadIdx.x) * 2654435761ll) % n;
  if (y[i] != fmaxf(x[i], 0.0f)) atomicExch(holds, 0);
}

__global__ void relu_unless_done(const float* __restrict__ x, float* __restrict__ y, int64_t n, const int* holds) {
  if (*holds) return;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  int* holds = static_cast<int*>(ctx->workspace(ctx, sizeof(int)));
  if (!holds) return DRK_E_WORKSPACE;
  cudaMemsetAsync(holds, 1, sizeof(int), stream);  // non-zero: "holds" until a sample misses
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  check_sample<<<1, 256, 0, stream>>>(x, y, n, holds);
  int64_t blocks = (n + 255) / 256;
  if (blocks > 132 * 32) blocks = 132 * 32;
  relu_unless_done<<<(unsigned)blocks, 256, 0, stream>>>(x, y, n, holds);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
