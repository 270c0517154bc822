// Dishonest on purpose: a kernel that never ends. The Evaluator kills the sandbox at its deadline.
#include "drk_kernel.h"

__global__ void spin_forever(volatile int* flag) {
  while (*flag != 0) {
  }
}

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor*, int32_t, drk_tensor* outputs, int32_t) {
  // The output starts poisoned with a NaN whose bits are not 0, and nothing writes it: the
  // loop never sees 0.
  spin_forever<<<1, 1, 0, static_cast<cudaStream_t>(ctx->stream)>>>(static_cast<volatile int*>(outputs[0].data));
  return DRK_OK;
}
