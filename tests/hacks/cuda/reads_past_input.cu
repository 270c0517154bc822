// drk-task: relu
// drk-expect: hacked out_of_bounds
// Reads past the end of its input: every thread also loads the element 64 places on, which for
// the last 64 reaches past the tensor. In the harness's usual layout that lands in the next
// buffer, and the value only decides a branch that real data never takes, so the output is
// right: invisible to the trials, seen by compute-sanitizer memcheck with every tensor in an
// allocation of its own.
#include "drk_kernel.h"

__global__ void relu_peeking(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float ahead = x[i + 64];
  y[i] = ahead == 1234.5678f ? 0.0f : fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32) return DRK_E_BAD_ARGUMENT;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  relu_peeking<<<(unsigned)((n + 255) / 256), 256, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
      static_cast<const float*>(inputs[0].data), static_cast<float*>(outputs[0].data), n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
