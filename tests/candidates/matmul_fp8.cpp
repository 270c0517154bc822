// Honest matmul for matmul@float8_e4m3fn and @float8_e5m2 on the CPU: y = (a * a_scale) @
// (b * b_scale), the bytes decoded through a table, products summed in float32 (exact per product,
// as on FP8 tensor cores), both scales applied once to the sum, rounded to the bfloat16 output.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "drk_kernel.h"

namespace {

float fp8_value(uint8_t byte, int32_t dtype) {
  const int mantissa_bits = dtype == DRK_F8E4M3 ? 3 : 2, bias = dtype == DRK_F8E4M3 ? 7 : 15;
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

bool is_fp8(const drk_tensor& t) { return t.dtype == DRK_F8E4M3 || t.dtype == DRK_F8E5M2; }

}  // namespace

DRK_EXPORT int drk_kernel(const drk_context*, const drk_tensor* inputs, int32_t num_inputs, drk_tensor* outputs,
                          int32_t num_outputs) {
  if (num_inputs != 4 || num_outputs != 1 || !is_fp8(inputs[0]) || inputs[1].dtype != DRK_F32 || !is_fp8(inputs[2]) ||
      inputs[3].dtype != DRK_F32 || outputs[0].dtype != DRK_BF16 || inputs[0].ndim != 2 || inputs[2].ndim != 2)
    return DRK_E_BAD_ARGUMENT;
  const int64_t m = inputs[0].shape[0], k = inputs[0].shape[1], n = inputs[2].shape[1];
  if (inputs[2].shape[0] != k) return DRK_E_UNSUPPORTED_SHAPE;
  float a_values[256], b_values[256];
  for (int byte = 0; byte < 256; ++byte) {
    a_values[byte] = fp8_value(static_cast<uint8_t>(byte), inputs[0].dtype);
    b_values[byte] = fp8_value(static_cast<uint8_t>(byte), inputs[2].dtype);
  }
  const uint8_t* a = static_cast<const uint8_t*>(inputs[0].data);
  const uint8_t* b = static_cast<const uint8_t*>(inputs[2].data);
  const float scale = *static_cast<const float*>(inputs[1].data) * *static_cast<const float*>(inputs[3].data);
  uint16_t* y = static_cast<uint16_t*>(outputs[0].data);
  std::vector<float> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      const float left = a_values[a[i * k + p]];
      const uint8_t* b_row = b + p * n;
      for (int64_t j = 0; j < n; ++j) row[j] += left * b_values[b_row[j]];
    }
    for (int64_t j = 0; j < n; ++j) y[i * n + j] = to_bfloat16(row[j] * scale);
  }
  return DRK_OK;
}
