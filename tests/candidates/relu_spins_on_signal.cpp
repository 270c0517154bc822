// Honest single-threaded ReLU for the `relu` task that, on SIGUSR1, spends 300 us of CPU in the
// signal handler: a test sends the signal after a batch's reply, standing in for threads that
// spin a while after their work before they sleep (OpenMP's idle workers do), so that the
// sandbox uses CPU after its reply and before the Evaluator reads its clock.
#include <signal.h>
#include <time.h>

#include "drk_kernel.h"

namespace {

constexpr long kSpinNs = 300'000;

long thread_cpu_ns() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1'000'000'000L + now.tv_nsec;
}

void spin_on_signal(int) {
  const long until = thread_cpu_ns() + kSpinNs;
  while (thread_cpu_ns() < until) {
  }
}

__attribute__((constructor)) void install_spin_handler() {
  struct sigaction action {};
  action.sa_handler = spin_on_signal;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, nullptr);
}

}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32) return DRK_E_BAD_ARGUMENT;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return DRK_OK;
}
