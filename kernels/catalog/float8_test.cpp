// FP8 bytes: every format's values, encoding that rounds to nearest even and saturates, and the
// per-tensor quantisation the FP8 variants draw with.
#include "kernels/catalog/float8.h"

#include <ATen/ATen.h>

#include <cmath>
#include <vector>

#include "tests/doctest_drk.h"

using namespace drk::kernels;

namespace {

at::Tensor values_of(const std::vector<double>& values) {
  return at::tensor(values, at::TensorOptions().dtype(at::kDouble));
}
std::vector<int> bytes_of(const at::Tensor& bytes) {
  std::vector<int> out;
  const at::Tensor flat = bytes.to(at::kInt).contiguous();
  for (int64_t i = 0; i < flat.numel(); ++i) out.push_back(flat.data_ptr<int32_t>()[i]);
  return out;
}

}  // namespace

DRK_TEST_CASE("FP8 values: e4m3fn has no infinities and tops out at 448, e5m2 is IEEE-like up to 57344") {
  const at::Tensor e4m3 = float8_values(DType::float8_e4m3fn);
  DRK_CHECK(e4m3[0x38].item<double>() == 1.0);
  DRK_CHECK(e4m3[0x7E].item<double>() == 448.0);
  DRK_CHECK(e4m3[0xFE].item<double>() == -448.0);
  DRK_CHECK(e4m3[0x01].item<double>() == std::ldexp(1.0, -9));
  DRK_CHECK(e4m3[0x08].item<double>() == std::ldexp(1.0, -6));  // the smallest normal
  DRK_CHECK(std::isnan(e4m3[0x7F].item<double>()));
  DRK_CHECK(std::isnan(e4m3[0xFF].item<double>()));
  DRK_CHECK(at::isnan(e4m3).sum().item<int64_t>() == 2);
  const at::Tensor e5m2 = float8_values(DType::float8_e5m2);
  DRK_CHECK(e5m2[0x3C].item<double>() == 1.0);
  DRK_CHECK(e5m2[0x7B].item<double>() == 57344.0);
  DRK_CHECK(e5m2[0x01].item<double>() == std::ldexp(1.0, -16));
  DRK_CHECK(std::isinf(e5m2[0x7C].item<double>()));
  DRK_CHECK(at::isnan(e5m2).sum().item<int64_t>() == 6);
  DRK_CHECK(float8_max(DType::float8_e4m3fn) == 448.0);
  DRK_CHECK(float8_max(DType::float8_e5m2) == 57344.0);
}

DRK_TEST_CASE("FP8 encoding: every finite value back to its byte, ties to even, saturation at the largest") {
  for (DType format : {DType::float8_e4m3fn, DType::float8_e5m2}) {
    DRK_INFO(dtype_name(format));
    const at::Tensor values = float8_values(format);
    const at::Tensor finite = at::isfinite(values) & (values != 0);
    const at::Tensor codes = at::arange(256, at::TensorOptions().dtype(at::kLong)).masked_select(finite);
    for (at::ScalarType working : {at::kDouble, at::kFloat}) {
      const at::Tensor encoded = float8_encode(values.masked_select(finite).to(working), format);
      DRK_CHECK(at::equal(encoded.to(at::kLong), codes));
    }
    DRK_CHECK(bytes_of(float8_encode(values_of({0.0, -0.0}), format)) == std::vector<int>{0, 0});
    // Decoding is the table, in any dtype that holds FP8 values.
    DRK_CHECK(at::equal(float8_decode(codes.to(at::kByte), format, at::kDouble), values.masked_select(finite)));
    DRK_CHECK(at::equal(float8_decode(codes.to(at::kByte), format, at::kBFloat16).to(at::kDouble),
                        values.masked_select(finite)));
  }
  // e4m3fn at 1: the quantum is 1/8. Halfway between 1 (0x38, even) and 1.125 rounds down, between
  // 1.125 and 1.25 (0x3A, even) up; 1.97 rounds up into the next binade (2.0 is 0x40).
  DRK_CHECK(bytes_of(float8_encode(values_of({1.0625, 1.1875, 1.96875, -1.0625}), DType::float8_e4m3fn)) ==
            std::vector<int>{0x38, 0x3A, 0x40, 0xB8});
  // Subnormals: half the smallest (2^-10) ties to 0; 1.5 quanta to 2 quanta.
  DRK_CHECK(bytes_of(float8_encode(values_of({std::ldexp(1.0, -10), std::ldexp(1.5, -9)}), DType::float8_e4m3fn)) ==
            std::vector<int>{0x00, 0x02});
  // Past the largest finite value: saturated, never NaN (e4m3fn) or infinity (e5m2).
  DRK_CHECK(bytes_of(float8_encode(values_of({464.0, 1e6, -1e6}), DType::float8_e4m3fn)) ==
            std::vector<int>{0x7E, 0x7E, 0xFE});
  DRK_CHECK(bytes_of(float8_encode(values_of({61440.0, -1e9}), DType::float8_e5m2)) == std::vector<int>{0x7B, 0xFB});
}

DRK_TEST_CASE("FP8 quantisation: a per-tensor scale puts the largest magnitude on the format's largest value") {
  const at::Tensor values = at::randn({64, 33}, at::TensorOptions().dtype(at::kFloat)) * 3.0;
  for (DType format : {DType::float8_e4m3fn, DType::float8_e5m2}) {
    at::Tensor bytes = at::empty(values.sizes(), at::TensorOptions().dtype(at::kByte));
    at::Tensor scale = at::empty({1}, at::TensorOptions().dtype(at::kFloat));
    float8_quantise_into(values, format, bytes, scale);
    DRK_CHECK(scale.item<float>() == doctest::Approx(values.abs().max().item<float>() / float8_max(format)));
    const at::Tensor decoded = float8_decode(bytes, format, at::kDouble);
    DRK_CHECK(decoded.abs().max().item<double>() == float8_max(format));
    // Within half a quantum: 2^-4 relative for e4m3fn's 3 mantissa bits, 2^-3 for e5m2's 2
    // (the smallest magnitudes, subnormal after scaling, within half the smallest quantum).
    const double relative = format == DType::float8_e4m3fn ? 1.0 / 16 : 1.0 / 8;
    const at::Tensor error = (decoded * scale.to(at::kDouble) - values.to(at::kDouble)).abs();
    const at::Tensor bound = values.to(at::kDouble).abs() * relative + scale.to(at::kDouble) * std::ldexp(1.0, -9);
    DRK_CHECK(at::all(error <= bound).item<bool>());
  }
  // All zeros: scale 1, zero bytes.
  at::Tensor bytes = at::empty({4}, at::TensorOptions().dtype(at::kByte));
  at::Tensor scale = at::empty({1}, at::TensorOptions().dtype(at::kFloat));
  float8_quantise_into(at::zeros({4}), DType::float8_e4m3fn, bytes, scale);
  DRK_CHECK(scale.item<float>() == 1.0f);
  DRK_CHECK(bytes_of(bytes) == std::vector<int>{0, 0, 0, 0});
}
