#include "actors/learner/ppo_loss.h"

#include <torch/torch.h>

namespace drk::learner {

PpoTerms ppo_terms(const torch::Tensor& new_logp, const torch::Tensor& old_logp,
                   const torch::Tensor& advantages, const PpoSettings& settings) {
  const auto advantage = advantages.unsqueeze(1).expand_as(new_logp);
  const auto ratio = torch::exp(new_logp - old_logp);
  const auto unclipped = -advantage * ratio;
  const auto clipped = -advantage * torch::clamp(ratio, 1.0 - settings.clip_low, 1.0 + settings.clip_high);
  const auto pessimistic = torch::max(unclipped, clipped);
  const auto dual = torch::min(pessimistic, -advantage * settings.dual_clip);
  const auto loss = torch::where(advantage < 0, dual, pessimistic);
  PpoTerms terms;
  terms.loss_sum = loss.sum();
  terms.clipped = clipped.gt(unclipped).sum().item<double>();
  terms.approx_kl_sum = (old_logp - new_logp).sum().item<double>();
  terms.count = new_logp.numel();
  return terms;
}

double approx_kl_sum(const torch::Tensor& reference_logp, const torch::Tensor& new_logp) {
  torch::NoGradGuard no_grad;
  const auto log_ratio = new_logp - reference_logp;
  return (torch::exp(log_ratio) - 1.0 - log_ratio).sum().item<double>();
}

bool kl_bound_reached(double mean_kl, double kl_max) { return kl_max > 0.0 && mean_kl > kl_max; }

}  // namespace drk::learner
