// Dishonest on purpose: a device-side assert fails. The CUDA context is dead afterwards; the
// sandbox reports the error and exits, and the Evaluator starts a fresh one.
#include <cassert>

#include "drk_kernel.h"

__global__ void assert_positive(const float* x) { assert(x[0] > 1e30f); }

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t, drk_tensor*, int32_t) {
  assert_positive<<<1, 1, 0, static_cast<cudaStream_t>(ctx->stream)>>>(static_cast<const float*>(inputs[0].data));
  return DRK_OK;
}
