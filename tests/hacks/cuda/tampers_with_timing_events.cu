// drk-task: relu
// drk-expect: hacked static.timer
// Tampering with the timer: records and waits on CUDA events of its own around the work, the
// tools the harness times with, to learn when it is being timed and to stall ctx->stream.
// Timers are outside the ABI: the static check rejects events that time (cudaEventCreate) or wait
// on the host (cudaEventSynchronize); only cudaEventDisableTiming events that join streams pass.
#include "drk_kernel.h"

__global__ void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  static cudaEvent_t mark = [] {
    cudaEvent_t event;
    cudaEventCreate(&event);
    return event;
  }();
  cudaEventRecord(mark, stream);
  cudaEventSynchronize(mark);
  relu<<<132 * 8, 256, 0, stream>>>(static_cast<const float*>(inputs[0].data), static_cast<float*>(outputs[0].data), n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
