// Honest ReLU for the `relu` task on CUDA with a global object whose destructor never returns (as
// one that waits on a condition variable for a detached worker): after its last request a
// sandbox, compute-sanitizer's included, must end without running it.
#include <unistd.h>

#include "drk_kernel.h"

namespace {

struct BlocksAtExit {
  ~BlocksAtExit() {
    for (;;) pause();
  }
} blocks_at_exit;

}  // namespace

__global__ void relu(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32) return DRK_E_BAD_ARGUMENT;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  int64_t blocks = (n + 255) / 256;
  if (blocks > 132 * 32) blocks = 132 * 32;
  relu<<<(unsigned)blocks, 256, 0, static_cast<cudaStream_t>(ctx->stream)>>>(
      static_cast<const float*>(inputs[0].data), static_cast<float*>(outputs[0].data), n);
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
