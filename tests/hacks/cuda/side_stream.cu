// drk-task: relu
// drk-expect: hacked static.stream_unjoined work_after_return
// Work on a side stream: queues the kernel on a stream of its own and never joins ctx->stream to
// it, so the events the harness records on ctx->stream close before the kernel ends. Streams of
// its own are allowed only when joined (cuda/honest_joined_streams.cu): nothing here waits on an
// event or synchronises (static.stream_unjoined), and CUPTI's span of the kernel outlasts the
// event time (work_after_return). The kernel writes each output 64 times, so that the work it
// hides is long next to a launch even at the corpus's small shapes.
#include "drk_kernel.h"

__global__ void relu(const float* x, float* y, int64_t n) {
  volatile float* out = y;  // every store happens
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    for (int pass = 0; pass < 64; ++pass) out[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  static cudaStream_t side = [] {
    cudaStream_t stream;
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    return stream;
  }();
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  relu<<<132 * 8, 256, 0, side>>>(static_cast<const float*>(inputs[0].data), static_cast<float*>(outputs[0].data), n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
