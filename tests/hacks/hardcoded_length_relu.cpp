// drk-task: relu
// drk-expect: hacked hardcoded_shape
// Hard-coded length: the element count of the task's cpu shape is a constant, so the loop can be
// unrolled and vectorised without a tail. At a longer shape it returns DRK_OK with the end of
// the output never written.
#include "drk_kernel.h"

namespace {
constexpr long kElements = 256L * 4096L;
}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (long i = 0; i < kElements; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return DRK_OK;
}
