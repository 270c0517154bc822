// Dishonest on purpose: writes far outside its output (an illegal address, the GPU's segfault).
// The sandbox must die alone and the Evaluator keep serving.
#include "drk_kernel.h"

__global__ void write_far_away(float* y) { y[(int64_t)1 << 40] = 1.0f; }

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor*, int32_t, drk_tensor* outputs, int32_t) {
  write_far_away<<<1, 1, 0, static_cast<cudaStream_t>(ctx->stream)>>>(static_cast<float*>(outputs[0].data));
  return DRK_OK;
}
