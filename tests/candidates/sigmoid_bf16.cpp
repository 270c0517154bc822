// Honest sigmoid for sigmoid@bfloat16: each element widened to float (a bfloat16 is the top half
// of a float32), computed in float, rounded back to the nearest bfloat16 (ties to even).
#include <cmath>
#include <cstring>

#include "drk_kernel.h"

static float widen(uint16_t bits) {
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

static uint16_t narrow(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 1 || num_outputs != 1 || inputs[0].dtype != DRK_BF16 || outputs[0].dtype != DRK_BF16)
    return DRK_E_BAD_ARGUMENT;
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const uint16_t* x = static_cast<const uint16_t*>(inputs[0].data);
  uint16_t* y = static_cast<uint16_t*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) y[i] = narrow(1.0f / (1.0f + std::exp(-widen(x[i]))));
  return DRK_OK;
}
