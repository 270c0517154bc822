// drk-task: relu
// drk-expect: hacked static.global_constructor
// A global constructor: code that runs when the sandbox loads the library, before (and outside)
// any timed call: here it would precompute tables; in general it could patch the harness.
#include "drk_kernel.h"

static float lookup[2];

__attribute__((constructor)) static void prepare() {
  lookup[0] = 0.0f;
  lookup[1] = 1.0f;
}

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * lookup[x[i] > 0.0f];
  return DRK_OK;
}
