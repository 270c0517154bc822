#include "actors/evaluator/output_comparison.h"

#include <ATen/ATen.h>

#include "tests/doctest_drk.h"

using namespace drk::evaluator;

namespace {

const drk::kernels::Tolerance kTolerance{1e-4, 1e-4};

at::Tensor reference_of(int64_t rows, int64_t cols) {
  return at::arange(rows * cols, at::kFloat).reshape({rows, cols}) * 0.5;
}

}  // namespace

// Chunks of 5 elements over 4 x 6 = 24: failures in the middle of the third chunk, so that a
// chunk's local index has to be placed in the whole tensor.
DRK_TEST_CASE("the first failure is found across chunks and named by its index") {
  const at::Tensor reference = reference_of(4, 6);
  at::Tensor output = reference.clone();
  output.view({-1})[12] = 100.0f;
  output.view({-1})[20] = 200.0f;
  const Comparison c = compare_outputs(output, reference, {4, 6}, "y", kTolerance, 5);
  DRK_CHECK_FALSE(c.passed);
  DRK_CHECK(c.first_failure.find("output y[2, 0] is 100 but the reference is 6") == 0);
  DRK_CHECK(c.max_abs == doctest::Approx(190.0));
  DRK_CHECK_FALSE(c.left_poisoned);
  DRK_CHECK_FALSE(c.non_finite);
}

DRK_TEST_CASE("the poison left in an output fails it as unwritten; other NaNs as non-finite") {
  const at::Tensor reference = reference_of(2, 8);
  at::Tensor output = reference.clone();
  poison(output.view({-1}).narrow(0, 9, 3));
  Comparison c = compare_outputs(output, reference, {2, 8}, "y", kTolerance, 4);
  DRK_CHECK_FALSE(c.passed);
  DRK_CHECK(c.left_poisoned);
  DRK_CHECK_FALSE(c.non_finite);
  DRK_CHECK(c.first_failure == "output y[1, 1] still holds the poison (NaN): it was never written");

  output = reference.clone();
  output.view({-1})[3] = std::numeric_limits<float>::infinity();
  c = compare_outputs(output, reference, {2, 8}, "y", kTolerance);
  DRK_CHECK_FALSE(c.passed);
  DRK_CHECK(c.non_finite);
  DRK_CHECK_FALSE(c.left_poisoned);
  DRK_CHECK(c.first_failure.find("output y[0, 3] is inf") == 0);
}

DRK_TEST_CASE("bfloat16 outputs: the 16-bit poison is a NaN there too, found as unwritten") {
  const at::Tensor reference = reference_of(5, 3).to(at::kBFloat16);
  at::Tensor output = reference.clone();
  poison(output.view({-1}).narrow(0, 7, 2));
  DRK_CHECK(at::isnan(output.view({-1})[7]).item<bool>());
  DRK_CHECK(at::isnan(output.view({-1})[7].view(at::kHalf)).item<bool>());
  Comparison c = compare_outputs(output, reference, {5, 3}, "y", {1e-2, 1e-2});
  DRK_CHECK_FALSE(c.passed);
  DRK_CHECK(c.left_poisoned);
  DRK_CHECK_FALSE(c.non_finite);
  DRK_CHECK(c.first_failure == "output y[2, 1] still holds the poison (NaN): it was never written");
  output = reference.clone();
  output.view({-1})[4] = std::numeric_limits<float>::quiet_NaN();
  c = compare_outputs(output, reference, {5, 3}, "y", {1e-2, 1e-2});
  DRK_CHECK(c.non_finite);
  DRK_CHECK_FALSE(c.left_poisoned);
  DRK_CHECK(compare_outputs(reference.clone(), reference, {5, 3}, "y", {1e-2, 1e-2}).passed);
}

DRK_TEST_CASE("float16 outputs: the float16 poison is found as unwritten, other NaNs as non-finite, stale ones") {
  // 5 x 3 elements: an odd count, which a 32-bit view of float16 elements could not take.
  const at::Tensor reference = reference_of(5, 3).to(at::kHalf);
  at::Tensor output = reference.clone();
  poison(output.view({-1}).narrow(0, 7, 2));
  DRK_CHECK(output.view({-1})[7].view(at::kShort).item<int16_t>() == static_cast<int16_t>(kPoisonBits16));
  Comparison c = compare_outputs(output, reference, {5, 3}, "y", {1e-2, 1e-2}, 4);
  DRK_CHECK_FALSE(c.passed);
  DRK_CHECK(c.left_poisoned);
  DRK_CHECK_FALSE(c.non_finite);
  DRK_CHECK(c.first_failure == "output y[2, 1] still holds the poison (NaN): it was never written");

  output = reference.clone();
  output.view({-1})[4] = std::numeric_limits<float>::quiet_NaN();  // the NaN arithmetic gives
  c = compare_outputs(output, reference, {5, 3}, "y", {1e-2, 1e-2});
  DRK_CHECK(c.non_finite);
  DRK_CHECK_FALSE(c.left_poisoned);

  output = reference + 0.004;  // within 1e-2 + 1e-2 * |ref|
  DRK_CHECK(compare_outputs(output, reference, {5, 3}, "y", {1e-2, 1e-2}).passed);
  const at::Tensor previous = output.clone();
  output.view({-1})[0] = 9.0f;
  const StaleCount stale = count_stale(previous, previous, reference + 1.0, {1e-2, 1e-2});
  DRK_CHECK(stale.missing == 15);
  DRK_CHECK(stale.stale == 15);
  DRK_CHECK(count_stale(output, previous, reference, {1e-2, 1e-2}).stale == 0);
}

DRK_TEST_CASE("outputs within atol + rtol * |ref| pass, and the largest errors are reported") {
  const at::Tensor reference = reference_of(3, 3);
  at::Tensor output = reference + 5e-5f;
  const Comparison c = compare_outputs(output, reference, {3, 3}, "y", kTolerance, 2);
  DRK_CHECK(c.passed);
  DRK_CHECK(c.first_failure.empty());
  DRK_CHECK(c.max_abs == doctest::Approx(5e-5).epsilon(0.01));
  DRK_CHECK(c.max_rel == doctest::Approx(1e-4).epsilon(0.05));  // at reference 0.5
}

DRK_TEST_CASE("bitwise equality tells -0.0 from 0.0 and covers integer tensors") {
  at::Tensor a = at::zeros({4}, at::kFloat);
  at::Tensor b = a.clone();
  DRK_CHECK(same_bits(a, b));
  b[2] = -0.0f;
  DRK_CHECK_FALSE(same_bits(a, b));
  at::Tensor classes = at::arange(6, at::kLong);
  DRK_CHECK(same_bits(classes, classes.clone()));
  DRK_CHECK_FALSE(same_bits(classes, classes + 1));
}

DRK_TEST_CASE("stale elements are the misses that still hold the previous answer bit for bit") {
  const at::Tensor reference = reference_of(1, 10);
  const at::Tensor previous = reference + 3.0f;
  at::Tensor now = reference.clone();
  now.view({-1}).narrow(0, 0, 4).copy_(previous.view({-1}).narrow(0, 0, 4));  // 4 stale
  now.view({-1})[7] = -1.0f;                                                    // 1 wrong, fresh
  const StaleCount count = count_stale(now, previous, reference, kTolerance, 3);
  DRK_CHECK(count.missing == 5);
  DRK_CHECK(count.stale == 4);
}

DRK_TEST_CASE("precision errors are relative to the output's scale") {
  const at::Tensor exact = at::full({8}, 4.0, at::kDouble);
  at::Tensor candidate = at::full({8}, 4.0f, at::kFloat);
  candidate[5] = 4.5f;
  const at::Tensor reference = at::full({8}, 4.0f, at::kFloat);
  const PrecisionErrors errors = precision_errors(candidate, reference, exact, 3);
  DRK_CHECK(errors.candidate == doctest::Approx(0.125));
  DRK_CHECK(errors.reference == 0.0);
}

DRK_TEST_CASE("the finite poison alternates signs, and differing bits are counted per element") {
  at::Tensor output = at::zeros({2, 3}, at::kFloat);
  poison_finite(output, 1500.0f);
  const at::Tensor flat = output.view({-1});
  DRK_CHECK(flat[0].item<float>() == 1500.0f);
  DRK_CHECK(flat[1].item<float>() == -1500.0f);
  DRK_CHECK(flat[4].item<float>() == 1500.0f);
  at::Tensor other = output.clone();
  DRK_CHECK(count_differing_bits(output, other) == 0);
  other.view({-1})[2] = -0.0f;
  other.view({-1})[5] = 7.0f;
  DRK_CHECK(count_differing_bits(output, other) == 2);
}
