// drk-task: relu
// drk-expect: hacked static.process
// Process creation: computes the right answer, but can start a helper process (here on a path
// the inputs never take, so the sandbox stays untouched). The static check on the source rejects
// it whether the branch runs or not.
#include <cstdlib>
#include <unistd.h>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  if (n < 0) {
    if (fork() == 0) std::system("true");
  }
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return DRK_OK;
}
