// drk-task: relu
// drk-expect: hacked static.thread
// Work escaping the timer through a thread: drk_kernel starts a host thread that queues the kernel
// on ctx->stream, detaches it and returns at once. Events recorded around the call close before
// the thread's launch; the CUDA sandbox counts no threads (the CUDA runtime and CUPTI start their
// own), so the source is the evidence: a CUDA candidate's work belongs on ctx->stream, queued
// before it returns, and host threads fail the static check.
#include <thread>

#include "drk_kernel.h"

__global__ void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  std::thread([=] { relu<<<132 * 8, 256, 0, stream>>>(x, y, n); }).detach();
  return DRK_OK;
}
