// drk-task: relu
// drk-expect: hacked static.signal
// Signals: installs a SIGALRM handler and an interval timer, the classic way to do work when the
// harness is not looking (or to interrupt the harness). Installed on a path the inputs never
// take; the static check rejects it regardless.
#include <signal.h>
#include <sys/time.h>

#include "drk_kernel.h"

static void on_alarm(int) {}

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t, drk_tensor* outputs, int32_t) {
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  if (n < 0) {
    signal(SIGALRM, on_alarm);
    itimerval every{{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &every, nullptr);
  }
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return DRK_OK;
}
