// drk-task: relu
// drk-expect: hacked inputs_mutated
// Output aliasing of an input: computes ReLU in place in the input's buffer (as if the output
// were the input) and copies it to the output, so the answer is right but the input is gone.
#include "drk_kernel.h"

__global__ void relu_in_place(float* x, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) x[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  float* x = static_cast<float*>(inputs[0].data);
  relu_in_place<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(x, n);
  cudaMemcpyAsync(outputs[0].data, x, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice, stream);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
