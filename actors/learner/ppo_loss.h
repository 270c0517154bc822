// The clipped policy-gradient objective of the Learner, per decision (a knob's option plays
// the part of a token): ratio = exp(logp_new - logp_behaviour),
//   loss = max(-A * ratio, -A * clip(ratio, 1 - clip_low, 1 + clip_high))   (PPO, asymmetric)
//   and, where A < 0, min(that, -A * dual_clip)                            (dual clip)
// as in Dr. Kernel's training (clip 0.2 / 0.28, dual clip 3.0).
//
// Thread-safety: pure function over tensors.
#pragma once

#include <torch/types.h>

namespace drk::learner {

struct PpoSettings {
  double clip_low = 0.2;
  double clip_high = 0.28;
  double dual_clip = 3.0;
};

struct PpoTerms {
  torch::Tensor loss_sum;     // scalar, differentiable: sum of per-decision losses
  double clipped = 0.0;       // decisions where the clipped term was taken
  double approx_kl_sum = 0.0; // sum of logp_behaviour - logp_new
  int64_t count = 0;          // decisions
};

// new_logp, old_logp: [B, K]; advantages: [B] (one per turn, shared by its K decisions).
PpoTerms ppo_terms(const torch::Tensor& new_logp, const torch::Tensor& old_logp,
                   const torch::Tensor& advantages, const PpoSettings& settings);

// The trust region (experiment.kl_max): the sum over decisions of the k3 estimate of
// KL(reference || new), (r - 1) - log r with r = exp(new_logp - reference_logp): never negative,
// 0 where the policies agree. reference_logp is the policy before the update.
double approx_kl_sum(const torch::Tensor& reference_logp, const torch::Tensor& new_logp);

// Whether the epochs stop before this optimizer step: kl_max > 0 and the mean KL exceeds it.
bool kl_bound_reached(double mean_kl, double kl_max);

}  // namespace drk::learner
