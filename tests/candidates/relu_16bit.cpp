// Honest ReLU for the relu@float16 and relu@bfloat16 variants: both formats keep the sign in
// the top bit, so max(x, 0) is the element itself or +0, exactly.
#include "drk_kernel.h"

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1) return DRK_E_BAD_ARGUMENT;
  if ((inputs[0].dtype != DRK_F16 && inputs[0].dtype != DRK_BF16) || outputs[0].dtype != inputs[0].dtype)
    return DRK_E_BAD_ARGUMENT;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const uint16_t* x = static_cast<const uint16_t*>(inputs[0].data);
  uint16_t* y = static_cast<uint16_t*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] & 0x8000u) ? 0 : x[i];
  return DRK_OK;
}
