// FP8: the two 8-bit float formats of FP8 inference and training (OCP 8-bit floating point, as
// PyTorch's float8_e4m3fn and float8_e5m2), held as bytes, so that a LibTorch without FP8 types
// (Debian's 1.13) draws, decodes and compares them like one that has them.
//
//   e4m3fn: 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities; 0x7F and 0xFF are NaN;
//           largest 448, smallest subnormal 2^-9.
//   e5m2:   1 sign, 5 exponent (bias 15), 2 mantissa bits; IEEE-like (infinities, NaNs);
//           largest 57344, smallest subnormal 2^-16.
//
// A quantised tensor is its bytes and a per-tensor float32 scale: value = decode(byte) * scale,
// with scale = amax / (the format's largest value), so that the tensor's largest magnitude lands
// on the format's largest finite value (the "tensorwise" scaling of torch._scaled_mm).
//
// Thread-safety: pure functions of their arguments. Errors: `format` must be an FP8 DType (a
// fault otherwise: std::invalid_argument); tensors are LibTorch's errors (c10::Error).
#pragma once

#include <ATen/core/Tensor.h>

#include "kernels/catalog/task.h"

namespace drk::kernels {

// The largest finite value of `format`: 448 or 57344.
double float8_max(DType format);

// The value of every byte of `format`, [256] float64 on the CPU (NaN where the byte is one).
at::Tensor float8_values(DType format);

// The bytes (uint8, same shape and device) nearest to `values` in `format`, ties to even, with
// magnitudes past the largest finite value saturated to it (as the scaled casts of FP8 recipes).
// `values` must be finite.
at::Tensor float8_encode(const at::Tensor& values, DType format);

// The values of `bytes` (uint8) in `format`, as `dtype` (which holds every FP8 value exactly from
// float16 up), on the bytes' device.
at::Tensor float8_decode(const at::Tensor& bytes, DType format, at::ScalarType dtype);

// `values` quantised: writes the bytes into `bytes` (uint8, values' shape) and the scale into
// `scale` (float32, one element), both on values' device. All-zero values get scale 1.
void float8_quantise_into(const at::Tensor& values, DType format, const at::Tensor& bytes, const at::Tensor& scale);

}  // namespace drk::kernels
