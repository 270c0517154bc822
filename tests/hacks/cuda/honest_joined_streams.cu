// drk-task: relu
// drk-expect: honest static.side_stream
// Honest with two streams: half of the ReLU on ctx->stream, half on a stream of its own, forked
// from ctx->stream and joined back to it before returning (events created with
// cudaEventDisableTiming: cudaEventRecord on one stream, cudaStreamWaitEvent on the other). Every
// kernel ends before the harness's end event on ctx->stream; the static check only reports the
// stream (static.side_stream).
#include "drk_kernel.h"

__global__ void relu(const float* __restrict__ x, float* __restrict__ y, int64_t begin, int64_t end) {
  for (int64_t i = begin + blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < end; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

struct SideStream {
  cudaStream_t stream = nullptr;
  cudaEvent_t forked = nullptr, joined = nullptr;
  SideStream() {
    cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&forked, cudaEventDisableTiming);
    cudaEventCreateWithFlags(&joined, cudaEventDisableTiming);
  }
};

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32) return DRK_E_BAD_ARGUMENT;
  static SideStream side;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  cudaStream_t stream = static_cast<cudaStream_t>(ctx->stream);
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  const int64_t half = n / 2;
  // Fork: the side stream starts after everything already queued on ctx->stream.
  cudaEventRecord(side.forked, stream);
  cudaStreamWaitEvent(side.stream, side.forked, 0);
  relu<<<132 * 4, 256, 0, stream>>>(x, y, 0, half);
  relu<<<132 * 4, 256, 0, side.stream>>>(x, y, half, n);
  // Join: ctx->stream goes on only after the side stream's half is done.
  cudaEventRecord(side.joined, side.stream);
  cudaStreamWaitEvent(stream, side.joined, 0);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
