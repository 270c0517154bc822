// drk-task: relu
// drk-expect: hacked sandbox_crashed static.process
// A spinning child that tries to slow the reference: the CPU reference runs in the Evaluator
// while the sandbox waits, so a process the candidate leaves spinning would steal its core and
// inflate the speedup. The syscall filter forbids the fork (SIGSYS), and every process of the
// sandbox's own user is killed when it ends.
#include <unistd.h>

#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  static const bool spun = [] {
    if (fork() == 0)
      for (volatile unsigned long i = 0;; ++i) {
      }
    return true;
  }();
  (void)spun;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return DRK_OK;
}
