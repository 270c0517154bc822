#include "kernels/schedule/policy_network.h"

#include <cmath>
#include <random>

#include <torch/nn/functional/activation.h>
#include <torch/torch.h>

#include "kernels/schedule/observation.h"

namespace drk::schedule {
namespace {

// PyTorch's default Linear initialisation (uniform in +-1/sqrt(fan_in)), drawn from `rng`;
// `scale` shrinks the heads so that the first policy is close to uniform.
void initialise(torch::nn::LinearImpl& layer, std::mt19937_64& rng, double scale) {
  torch::NoGradGuard no_grad;
  const double bound = scale / std::sqrt(static_cast<double>(layer.weight.size(1)));
  std::uniform_real_distribution<float> uniform(static_cast<float>(-bound), static_cast<float>(bound));
  auto weight = layer.weight.accessor<float, 2>();
  for (int64_t row = 0; row < weight.size(0); ++row) {
    for (int64_t column = 0; column < weight.size(1); ++column) weight[row][column] = uniform(rng);
  }
  layer.bias.zero_();
}

}  // namespace

PolicyNetworkImpl::PolicyNetworkImpl(uint64_t seed, Device device, int64_t hidden_size) : device_(device) {
  std::mt19937_64 rng(seed);
  input_ = register_module("input", torch::nn::Linear(observation_size(device), hidden_size));
  hidden_ = register_module("hidden", torch::nn::Linear(hidden_size, hidden_size));
  initialise(*input_, rng, 1.0);
  initialise(*hidden_, rng, 1.0);
  for (int family_index = 0; family_index < kFamilyCount; ++family_index) {
    const auto family = static_cast<Family>(family_index);
    std::vector<torch::nn::Linear> family_heads;
    const std::string prefix = device == Device::cuda ? "head_cuda_" : "head_";
    std::vector<std::optional<InapplicableOptions>> family_masks;
    const auto family_knobs = knobs(family, device);
    for (size_t knob = 0; knob < family_knobs.size(); ++knob) {
      const auto options = static_cast<int64_t>(family_knobs[knob].options.size()) + 1;
      auto head = register_module(prefix + std::string(family_name(family)) + "_" + family_knobs[knob].name,
                                  torch::nn::Linear(hidden_size, options));
      initialise(*head, rng, 0.1);
      family_heads.emplace_back(head);
      InapplicableOptions masks{torch::zeros({options}, torch::kBool), torch::zeros({options}, torch::kBool)};
      bool any = false;
      for (int64_t option = 0; option < options; ++option) {
        for (auto [precision, mask] :
             {std::pair{Precision::float32, &masks.float32}, {Precision::float16, &masks.float16}}) {
          const auto index = static_cast<uint16_t>(option);
          if (option_applies(family, device, precision, static_cast<int>(knob), index)) continue;
          (*mask)[option] = true;
          any = true;
        }
      }
      family_masks.push_back(any ? std::optional(masks) : std::nullopt);
    }
    heads_.push_back(std::move(family_heads));
    inapplicable_.push_back(std::move(family_masks));
  }
}

torch::Tensor PolicyNetworkImpl::trunk(const torch::Tensor& observations) {
  return torch::tanh(hidden_->forward(torch::tanh(input_->forward(observations))));
}

torch::Tensor PolicyNetworkImpl::knob_logits(Family family, int knob, const torch::Tensor& observations,
                                             const torch::Tensor& hidden, const torch::Tensor& later_turn) {
  auto logits = heads_.at(static_cast<size_t>(family)).at(static_cast<size_t>(knob))->forward(hidden);
  const int64_t keep = logits.size(1) - 1;
  // A large negative instead of -inf keeps entropy finite (0 * -1e9 = 0, 0 * -inf = nan).
  auto masked = torch::zeros_like(logits, torch::kBool);
  masked.select(1, keep).copy_(later_turn.logical_not());
  if (const auto& inapplicable = inapplicable_.at(static_cast<size_t>(family)).at(static_cast<size_t>(knob))) {
    const auto half = observations.select(1, half_precision_feature(family)).gt(0.5).unsqueeze(1);
    masked = masked.logical_or(torch::where(half, inapplicable->float16.to(logits.device()),
                                            inapplicable->float32.to(logits.device())));
  }
  return logits.masked_fill(masked, -1e9);
}

std::vector<torch::Tensor> PolicyNetworkImpl::knob_log_softmaxes(Family family,
                                                               const torch::Tensor& observations,
                                                               const torch::Tensor& later_turn) {
  const auto hidden = trunk(observations);
  std::vector<torch::Tensor> per_knob;
  const int knob_count = static_cast<int>(knobs(family, device_).size());
  for (int knob = 0; knob < knob_count; ++knob) {
    per_knob.push_back(torch::log_softmax(knob_logits(family, knob, observations, hidden, later_turn), 1));
  }
  return per_knob;
}

torch::Tensor PolicyNetworkImpl::log_probs(Family family, const torch::Tensor& observations,
                                           const torch::Tensor& actions,
                                           const torch::Tensor& later_turn) {
  std::vector<torch::Tensor> per_knob;
  int knob = 0;
  for (const auto& log_softmax : knob_log_softmaxes(family, observations, later_turn)) {
    per_knob.push_back(log_softmax.gather(1, actions.select(1, knob++).unsqueeze(1)).squeeze(1));
  }
  return torch::stack(per_knob, 1);
}

torch::Tensor PolicyNetworkImpl::entropy(Family family, const torch::Tensor& observations,
                                         const torch::Tensor& later_turn) {
  std::vector<torch::Tensor> per_knob;
  for (const auto& log_softmax : knob_log_softmaxes(family, observations, later_turn)) {
    per_knob.push_back(-(log_softmax.exp() * log_softmax).sum(1));
  }
  return torch::stack(per_knob, 1);
}

}  // namespace drk::schedule
