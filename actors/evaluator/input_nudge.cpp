#include "actors/evaluator/input_nudge.h"

#include <algorithm>
#include <random>
#include <set>

#include <ATen/ATen.h>

namespace drk::evaluator {

void nudge_inputs(std::vector<at::Tensor>& inputs, uint64_t seed) {
  std::mt19937_64 draw(seed);
  for (at::Tensor& input : inputs) {
    const int64_t elements = input.numel();
    const int64_t pairs = std::min(kNudgedPairs, elements / 2);
    if (pairs == 0) continue;
    // Distinct positions: a scatter to one place twice has no defined order on a GPU.
    std::uniform_int_distribution<int64_t> position(0, elements - 1);
    std::set<int64_t> taken;
    std::vector<int64_t> firsts, seconds;
    while (static_cast<int64_t>(seconds.size()) < pairs) {
      const int64_t at = position(draw);
      if (!taken.insert(at).second) continue;
      (firsts.size() == seconds.size() ? firsts : seconds).push_back(at);
    }
    const auto on_device = at::TensorOptions().dtype(at::kLong).device(input.device());
    const at::Tensor first = at::tensor(firsts, at::TensorOptions().dtype(at::kLong)).to(on_device);
    const at::Tensor second = at::tensor(seconds, at::TensorOptions().dtype(at::kLong)).to(on_device);
    at::Tensor flat = input.view({-1});
    const at::Tensor first_values = flat.index_select(0, first);
    const at::Tensor second_values = flat.index_select(0, second);
    flat.index_copy_(0, first, second_values);
    flat.index_copy_(0, second, first_values);
  }
}

}  // namespace drk::evaluator
