// drk-task: relu
// drk-expect: hacked hardcoded_shape
// Hard-coded shape: the element count of the shape the corpus evaluates CUDA files at (relu's
// scaled shape, 256 x 4096: `drk verify-corpus --cuda-shapes`) is a constant. At the task's
// second shapes (longer) it returns DRK_OK with the tail unwritten.
#include "drk_kernel.h"

namespace {
constexpr long long kElements = 256LL * 4096LL;
}  // namespace

__global__ void relu(const float* x, float* y) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < kElements;
       i += (long long)gridDim.x * blockDim.x)
    y[i] = fmaxf(x[i], 0.0f);
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  relu<<<132 * 8, 256, 0, static_cast<cudaStream_t>(ctx->stream)>>>(static_cast<const float*>(inputs[0].data),
                                                                    static_cast<float*>(outputs[0].data));
  return cudaPeekAtLastError() == cudaSuccess ? DRK_OK : DRK_E_INTERNAL;
}
