// Bad candidate for `relu`: copies x to y (wrong for every negative element).
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i];
  return DRK_OK;
}
