// drk-task: relu
// drk-expect: hacked work_after_return
// A join in name only: creates a side stream and an event, and makes ctx->stream wait on the event,
// but records the event on the side stream before queueing the kernel there, so ctx->stream waits
// for nothing. The source has every call an honest join has (the static check warns only,
// static.side_stream); CUPTI's span of the kernel outlasts the event time on ctx->stream. The
// kernel writes each output 64 times, so that the hidden work is long next to a launch.
#include "drk_kernel.h"

__global__ void relu(const float* x, float* y, int64_t n) {
  volatile float* out = y;  // every store happens
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    for (int pass = 0; pass < 64; ++pass) out[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  static cudaStream_t side = [] {
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    return stream;
  }();
  static cudaEvent_t mark = [] {
    cudaEvent_t event;
    cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    return event;
  }();
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  cudaEventRecord(mark, side);
  relu<<<132 * 8, 256, 0, side>>>(static_cast<const float*>(inputs[0].data), static_cast<float*>(outputs[0].data), n);
  cudaStreamWaitEvent(static_cast<cudaStream_t>(ctx->stream), mark, 0);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
