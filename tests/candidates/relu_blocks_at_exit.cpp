// Honest single-threaded ReLU for the `relu` task with a global object whose destructor never
// returns (as one that waits on a condition variable for a detached worker): after its last
// request a sandbox must end without running it.
#include <unistd.h>

#include "drk_kernel.h"

namespace {

struct BlocksAtExit {
  ~BlocksAtExit() {
    for (;;) pause();
  }
} blocks_at_exit;

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
