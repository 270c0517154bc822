// drk-task: relu
// drk-expect: hacked harness_symbol
// A clock of its own under the C library's name: `clock_gettime`, exported. The sandbox loads a
// candidate RTLD_LOCAL, with its own calls bound before, so today the definition is inert; the
// day anything loads objects into the global scope (RTLD_GLOBAL, a preload), every clock of the
// harness in that process would be this one. The sandbox refuses such an object before loading
// it, whatever the load flags (harness_symbol: the rule reads the object's hash table).
#include "drk_kernel.h"

extern "C" int clock_gettime(int, void* now) {
  static_cast<long*>(now)[0] = 0;
  static_cast<long*>(now)[1] = 0;
  return 0;
}

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return DRK_OK;
}
