#include "kernels/catalog/float8.h"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

// LibTorch has FP8 dtypes from 2.1: there a byte tensor is viewed as one and converted by
// LibTorch's own kernel (one pass, what a user's dequantisation costs); before, through a table.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define DRK_LIBTORCH_HAS_FLOAT8 1
#endif

namespace drk::kernels {
namespace {

struct Format {
  int mantissa_bits;
  int bias;
  double max;
  bool has_infinities;  // e5m2 (IEEE-like); e4m3fn spends its top code on more finite values
};

Format format_of(DType format) {
  switch (format) {
    case DType::float8_e4m3fn: return Format{3, 7, 448.0, false};
    case DType::float8_e5m2: return Format{2, 15, 57344.0, true};
    default: break;
  }
  throw std::invalid_argument("'" + std::string(dtype_name(format)) + "' is no FP8 format");
}

#ifdef DRK_LIBTORCH_HAS_FLOAT8
at::ScalarType libtorch_float8(DType format) {
  return format == DType::float8_e4m3fn ? at::ScalarType::Float8_e4m3fn : at::ScalarType::Float8_e5m2;
}
#endif

}  // namespace

double float8_max(DType format) { return format_of(format).max; }

at::Tensor float8_values(DType format) {
  const Format f = format_of(format);
  const int exponent_bits = 7 - f.mantissa_bits;
  const int top_exponent = (1 << exponent_bits) - 1;
  std::vector<double> values(256);
  for (int byte = 0; byte < 256; ++byte) {
    const int exponent = (byte >> f.mantissa_bits) & top_exponent;
    const int mantissa = byte & ((1 << f.mantissa_bits) - 1);
    double magnitude;
    if (!f.has_infinities && (byte & 0x7F) == 0x7F) magnitude = std::numeric_limits<double>::quiet_NaN();
    else if (f.has_infinities && exponent == top_exponent)
      magnitude = mantissa == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    else if (exponent == 0) magnitude = std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits);
    else magnitude = std::ldexp((1 << f.mantissa_bits) + mantissa, exponent - f.bias - f.mantissa_bits);
    values[byte] = (byte & 0x80) ? -magnitude : magnitude;
  }
  return at::tensor(values, at::TensorOptions().dtype(at::kDouble));
}

at::Tensor float8_encode(const at::Tensor& values, DType format) {
  const Format f = format_of(format);
  // In the values' own precision from float32 up, so that no earlier rounding decides a tie.
  const at::ScalarType working = values.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  const at::Tensor magnitude = values.to(working).abs();
  // The quantum of each magnitude's binade (the subnormals' below the smallest normal), then the
  // nearest multiple of it, ties to even (at::round), saturated to the largest finite value.
  const at::Tensor binade = (std::get<1>(at::frexp(magnitude)) - 1).clamp_min(1 - f.bias).to(working);
  const at::Tensor quantum = at::exp2(binade - f.mantissa_bits);
  const at::Tensor rounded = (at::round(magnitude / quantum) * quantum).clamp_max(f.max);
  // The fields of the rounded magnitude, which may have moved up a binade: rounded = m * 2^e with
  // m in [0.5, 1), so a normal's stored mantissa is (2m - 1) * 2^mantissa_bits.
  const auto [fraction, exponent] = at::frexp(rounded);
  const at::Tensor normal = rounded >= std::ldexp(1.0, 1 - f.bias);
  const at::Tensor exponent_field = at::where(normal, exponent.to(working) - 1 + f.bias, at::zeros_like(rounded));
  const at::Tensor mantissa_field =
      at::where(normal, (fraction * 2 - 1) * (1 << f.mantissa_bits), rounded * std::ldexp(1.0, f.bias - 1 + f.mantissa_bits));
  const at::Tensor sign = (values < 0).to(working) * 128;
  return (sign + exponent_field * (1 << f.mantissa_bits) + mantissa_field).to(at::kByte);
}

#ifndef DRK_LIBTORCH_HAS_FLOAT8
namespace {

// float8_values, made once per format: the timed reference decodes through it on every call.
const at::Tensor& values_table(DType format) {
  static const at::Tensor e4m3 = float8_values(DType::float8_e4m3fn);
  static const at::Tensor e5m2 = float8_values(DType::float8_e5m2);
  return format_of(format).has_infinities ? e5m2 : e4m3;
}

}  // namespace
#endif

at::Tensor float8_decode(const at::Tensor& bytes, DType format, at::ScalarType dtype) {
#ifdef DRK_LIBTORCH_HAS_FLOAT8
  return bytes.contiguous().view(libtorch_float8(format)).to(dtype);
#else
  const at::Tensor table = values_table(format).to(bytes.device(), dtype);
  return table.index_select(0, bytes.reshape({-1}).to(at::kLong)).view(bytes.sizes());
#endif
}

void float8_quantise_into(const at::Tensor& values, DType format, const at::Tensor& bytes, const at::Tensor& scale) {
  const at::Tensor amax = values.abs().max().to(at::kFloat);
  const at::Tensor tensor_scale = at::where(amax > 0, amax / float8_max(format), at::ones_like(amax));
  scale.copy_(tensor_scale.reshape(scale.sizes()));
  bytes.copy_(float8_encode(values / tensor_scale, format));
}

}  // namespace drk::kernels
