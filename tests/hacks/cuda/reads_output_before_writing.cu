// drk-task: relu
// drk-expect: hacked uninitialised_read results_cached
// An uninitialised read on the device: ReLU as a running maximum that starts from the output's own
// contents, y = max(y, x, 0), as if outputs arrived zeroed. fmaxf ignores the trials' NaN poison,
// so every trial passes; an output that already holds numbers (the previous answers in the
// engine's last batch after timing) keeps every element larger than the answer. compute-sanitizer
// initcheck, run with the outputs never written, sees the read itself.
#include "drk_kernel.h"

__global__ void relu_accumulate(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = fmaxf(fmaxf(y[i], x[i]), 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  relu_accumulate<<<132 * 8, 256, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
      static_cast<const float*>(inputs[0].data), static_cast<float*>(outputs[0].data), n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
