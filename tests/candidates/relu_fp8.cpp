// Honest ReLU for the FP8 variants (relu@float8_e4m3fn, relu@float8_e5m2): each byte decoded,
// times the input's scale (the float32 tensor after it), ReLU, rounded to the bfloat16 output.
#include <cmath>
#include <cstring>

#include "drk_kernel.h"

namespace {

float fp8_value(uint8_t byte, int mantissa_bits, int bias) {
  const int exponent = (byte & 0x7F) >> mantissa_bits;
  const int mantissa = byte & ((1 << mantissa_bits) - 1);
  const float magnitude = exponent == 0
                              ? std::ldexp(static_cast<float>(mantissa), 1 - bias - mantissa_bits)
                              : std::ldexp(static_cast<float>((1 << mantissa_bits) + mantissa), exponent - bias - mantissa_bits);
  return (byte & 0x80) ? -magnitude : magnitude;
}

uint16_t to_bfloat16(float value) {  // round to nearest even
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 2 || num_outputs != 1 || inputs[1].dtype != DRK_F32 || outputs[0].dtype != DRK_BF16)
    return DRK_E_BAD_ARGUMENT;
  if (inputs[0].dtype != DRK_F8E4M3 && inputs[0].dtype != DRK_F8E5M2) return DRK_E_BAD_ARGUMENT;
  const int mantissa_bits = inputs[0].dtype == DRK_F8E4M3 ? 3 : 2;
  const int bias = inputs[0].dtype == DRK_F8E4M3 ? 7 : 15;
  float values[256];
  for (int byte = 0; byte < 256; ++byte) values[byte] = fp8_value(static_cast<uint8_t>(byte), mantissa_bits, bias);
  const float scale = *static_cast<const float*>(inputs[1].data);
  int64_t n = 1;
  for (int d = 0; d < inputs[0].ndim; ++d) n *= inputs[0].shape[d];
  const uint8_t* x = static_cast<const uint8_t*>(inputs[0].data);
  uint16_t* y = static_cast<uint16_t*>(outputs[0].data);
  for (int64_t i = 0; i < n; ++i) {
    const float value = values[x[i]] * scale;
    y[i] = to_bfloat16(value > 0.0f ? value : 0.0f);
  }
  return DRK_OK;
}
