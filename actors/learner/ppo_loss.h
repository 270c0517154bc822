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

}  // namespace drk::learner
