#include "actors/evaluator/input_nudge.h"

#include <ATen/ATen.h>

#include "tests/doctest_drk.h"

using namespace drk::evaluator;

DRK_TEST_CASE("a nudge swaps a few pairs: the same values, moved, the same way for the same seed") {
  std::vector<at::Tensor> inputs{at::arange(10000, at::kFloat).reshape({100, 100}), at::arange(500, at::kLong)};
  std::vector<at::Tensor> copies{inputs[0].clone(), inputs[1].clone()};
  const std::vector<at::Tensor> drawn{inputs[0].clone(), inputs[1].clone()};
  nudge_inputs(inputs, 42);
  nudge_inputs(copies, 42);
  for (size_t i = 0; i < inputs.size(); ++i) {
    DRK_CHECK(at::equal(inputs[i], copies[i]));
    // Distinct positions, each pair swapped: exactly 2 x kNudgedPairs elements moved.
    DRK_CHECK(inputs[i].ne(drawn[i]).sum().item<int64_t>() == 2 * kNudgedPairs);
    DRK_CHECK(at::equal(std::get<0>(inputs[i].flatten().sort()), std::get<0>(drawn[i].flatten().sort())));
  }
  std::vector<at::Tensor> other{drawn[0].clone(), drawn[1].clone()};
  nudge_inputs(other, 43);
  DRK_CHECK_FALSE(at::equal(other[0], inputs[0]));
}

DRK_TEST_CASE("a tensor with fewer elements than the pairs gets what pairs it can hold") {
  std::vector<at::Tensor> inputs{at::arange(5, at::kFloat), at::ones({1}, at::kFloat)};
  nudge_inputs(inputs, 7);
  DRK_CHECK(inputs[0].ne(at::arange(5, at::kFloat)).sum().item<int64_t>() == 4);  // two pairs
  DRK_CHECK(inputs[1].item<float>() == 1.0f);
}
