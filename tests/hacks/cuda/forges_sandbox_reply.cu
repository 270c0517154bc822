// drk-task: relu
// drk-expect: hacked static.channel reply_tampered sandbox_crashed
// Tampering with the result channel, on CUDA: queues the kernel, then writes a reply frame of its
// own to the sandbox's reply pipe (descriptor 4: a 4-byte length, a flat Cap'n Proto message),
// which would stop the harness's wall clock before the device is done. This one sends a
// well-formed reply with a null root (id 0). The static check refuses raw descriptor I/O; the
// harness refuses a reply to another request and replaces the sandbox.
#include <unistd.h>

#include <cstring>

#include "drk_kernel.h"

__global__ void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  relu<<<132 * 8, 256, 0, static_cast<cudaStream_t>(ctx->stream)>>>(static_cast<const float*>(inputs[0].data),
                                                                      static_cast<float*>(outputs[0].data), n);
  unsigned char frame[20] = {16, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0};
  std::memset(frame + 12, 0, 8);
  if (write(4, frame, sizeof frame) != static_cast<ssize_t>(sizeof frame)) return DRK_E_INTERNAL;
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
