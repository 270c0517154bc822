// Bad candidate: a type error (the compiler's message must reach the user).
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context* ctx, const drk_tensor* inputs, int32_t num_inputs,
                          drk_tensor* outputs, int32_t num_outputs) {
  float* y = outputs[0].data_not_a_member;
  return DRK_OK
}
