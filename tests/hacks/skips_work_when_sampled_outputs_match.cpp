// drk-task: relu
// drk-expect: hacked results_cached
// Skips the work when the output already holds the answer at a few sampled places (the first,
// middle and last element): a cache keyed on a sample of the inputs, kept in the output itself.
// The trials and the finite-poison rerun find no answer in place and compute; the timed calls
// reuse their inputs and find the previous answer; the batch after timing draws every input
// afresh, so the samples miss and it computes. Only inputs changed in a few secret places, the
// rest as before, leave the samples matching and show the stale answer.
#include "drk_kernel.h"

static float relu(float v) { return v > 0.0f ? v : 0.0f; }

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32) return DRK_E_BAD_ARGUMENT;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  const int64_t samples[3] = {0, n / 2, n - 1};
  bool answered = true;
  for (int64_t at : samples) answered = answered && y[at] == relu(x[at]);
  if (answered) return DRK_OK;
  for (int64_t i = 0; i < n; ++i) y[i] = relu(x[i]);
  return DRK_OK;
}
