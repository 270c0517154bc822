// drk-task: relu
// drk-expect: honest shape.declined
// Honest specialisation: the kernel handles the task's cpu shape only, and says so with
// DRK_E_UNSUPPORTED_SHAPE for any other, as the ABI asks. KernelBench fixes each problem's
// shapes, so specialising to them is an optimisation, not a hack; only DRK_OK with wrong numbers is.
#include "drk_kernel.h"

namespace {
constexpr long kRows = 256, kColumns = 4096;
}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_F32) return DRK_E_BAD_ARGUMENT;
  if (inputs[0].ndim != 2 || inputs[0].shape[0] != kRows || inputs[0].shape[1] != kColumns)
    return DRK_E_UNSUPPORTED_SHAPE;
  const float* x = static_cast<const float*>(inputs[0].data);
  float* y = static_cast<float*>(outputs[0].data);
  for (long i = 0; i < kRows * kColumns; ++i) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
  return DRK_OK;
}
