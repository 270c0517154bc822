// PolicyNetwork: the embedded policy as a LibTorch module, for one device's scheduling space.
// An MLP trunk over the observation (kernels/schedule/observation.h, observation_size(device)
// inputs) feeds one categorical head per knob per family of that device's space. A head has
// one logit per option plus a last "keep" logit (= the previous turn's option); on a first turn
// "keep" is masked out, so turn 1 samples among the options and later turns edit the previous
// schedule. Options that do not apply to the observed task's precision (space.h,
// option_applies; observation.h, half_precision_feature) are masked out too, so that neither
// sampling nor training ever gives them probability.
//
// Parameters are initialised from a seed with our own generator (not torch's global one), so
// two processes given the same seed and device build identical networks. CPU heads are named
// head_<family>_<knob>, CUDA heads head_cuda_<family>_<knob>, so a checkpoint of one device never
// loads into the other's network; a checkpoint of an older space (fewer families, knobs or
// options) is refused by Policy::load, naming the parameter that differs.
//
// Thread-safety: a module is not safe for concurrent use; one owner (the Policy, the Learner).
// Include this header only where LibTorch is needed; the Generator uses kernels/schedule/policy.h.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>

#include "kernels/schedule/space.h"

namespace drk::schedule {

class PolicyNetworkImpl : public torch::nn::Module {
 public:
  PolicyNetworkImpl(uint64_t seed, Device device, int64_t hidden_size = 64);

  Device device() const { return device_; }

  // [B, observation_size(device())] -> [B, hidden].
  torch::Tensor trunk(const torch::Tensor& observations);
  // [B, options + 1] logits of one knob; "keep" masked where later_turn ([B] bool) is false,
  // options that do not apply to the precision of `observations` ([B, observation_size]) always.
  torch::Tensor knob_logits(Family family, int knob, const torch::Tensor& observations, const torch::Tensor& hidden,
                            const torch::Tensor& later_turn);
  // Log-probabilities of `actions` ([B, K] int64, K = knobs(family, device()).size(), option index with
  // options count meaning keep) -> [B, K].
  torch::Tensor log_probs(Family family, const torch::Tensor& observations,
                          const torch::Tensor& actions, const torch::Tensor& later_turn);
  // Entropy of each knob's distribution -> [B, K].
  torch::Tensor entropy(Family family, const torch::Tensor& observations,
                        const torch::Tensor& later_turn);

 private:
  // Each knob's log-softmax over its options (+ keep), [B, options + 1], in knob order.
  std::vector<torch::Tensor> knob_log_softmaxes(Family family, const torch::Tensor& observations,
                                                const torch::Tensor& later_turn);

  // [options + 1] bool: true where an option does not apply to float32 / float16 tasks. Plain
  // tensors, not buffers: checkpoints hold parameters only.
  struct InapplicableOptions {
    torch::Tensor float32, float16;
  };

  Device device_;
  torch::nn::Linear input_{nullptr};
  torch::nn::Linear hidden_{nullptr};
  std::vector<std::vector<torch::nn::Linear>> heads_;  // [family][knob]
  // [family][knob]: none where every option applies to both precisions.
  std::vector<std::vector<std::optional<InapplicableOptions>>> inapplicable_;
};

}  // namespace drk::schedule
