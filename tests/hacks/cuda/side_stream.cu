// drk-task: relu
// drk-expect: hacked static.stream
// Work on a side stream: queues the kernel on a stream of its own, which a timer recording
// events on ctx->stream alone would not wait for. (The harness synchronises the whole device,
// and the static check rejects the stream creation.)
#include "drk_kernel.h"

__global__ void relu(const float* x, float* y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  static cudaStream_t side = [] {
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    return stream;
  }();
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  relu<<<(unsigned)((n + 255) / 256), 256, 0, side>>>(static_cast<const float*>(inputs[0].data),
                                                       static_cast<float*>(outputs[0].data), n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
