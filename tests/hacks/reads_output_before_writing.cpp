// drk-task: relu
// drk-expect: hacked uninitialised_read results_cached
// An uninitialised read: ReLU as a running maximum that starts from the output's own contents,
// y = max(y, x, 0), as if outputs arrived zeroed (their contents are undefined when drk_kernel is
// called). fmaxf ignores the trials' NaN poison, so every trial passes; an output that already
// holds numbers (torch.empty's garbage in real use, the previous answers in the engine's last
// batch after timing) keeps every element larger than the answer: stale, wrong maxima.
#include <cmath>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = std::fmax(std::fmax(y[i], x[i]), 0.0f);
  return DRK_OK;
}
