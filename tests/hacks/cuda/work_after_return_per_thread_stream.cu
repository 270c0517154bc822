// drk-task: relu
// drk-expect: hacked work_after_return
// Asynchronous work after the call: launches on cudaStreamPerThread (no stream is created) and
// returns without joining ctx->stream to it (the static check fails that too:
// static.stream_unjoined). Events recorded on ctx->stream then close before the kernel ends;
// CUPTI's span of the kernel does not. The
// kernel writes each output 64 times, so that the work it hides is long next to a launch even at
// the corpus's small shapes (at KernelBench's one pass is enough).
#include "drk_kernel.h"

__global__ void relu(const float* x, float* y, int64_t n) {
  volatile float* out = y;  // every store happens
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    for (int pass = 0; pass < 64; ++pass) out[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  relu<<<132 * 8, 256, 0, cudaStreamPerThread>>>(static_cast<const float*>(inputs[0].data),
                                                 static_cast<float*>(outputs[0].data), n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
