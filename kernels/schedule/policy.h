// Policy: the embedded policy as the Generator and the Learner use it, without LibTorch in the
// header, for one device's scheduling space (kernels/schedule/space.h): the Generator and the
// Learner of a run build it for the device the run evaluates on (experiment.device). It samples
// one decision per knob for a family, given the observation and the
// previous turn's choice (decision index == the knob's option count means "keep": take the
// previous option), and it (de)serialises its parameters as bytes (PolicyWeights.parameters,
// checkpoint files).
//
// Determinism: parameters come from the seed and the device; sampling draws only from the caller's generator,
// so the same observations and generator state give the same decisions.
// Thread-safety: not safe for concurrent use; one owner.
// Errors: load() returns parse_error for bytes that are not this network's parameters.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/schedule/space.h"
#include "base/result.h"

namespace drk::schedule {

class PolicyNetworkImpl;  // kernels/schedule/policy_network.h (LibTorch)

struct Sampled {
  std::vector<uint16_t> decisions;  // per knob: an option index, or the option count for keep
  Choice choice;                    // the decisions with keep resolved
  std::vector<float> logprobs;      // per knob: log-probability of the decision
};

class Policy {
 public:
  Policy(uint64_t seed, Device device);
  ~Policy();
  Policy(Policy&&) noexcept;
  Policy& operator=(Policy&&) noexcept;

  Device device() const { return device_; }

  // `observation` has observation_size(device()) entries; `previous` is the previous turn's
  // choice of the same family (none on the first turn, where keep is never drawn). The choice
  // is of device(). `temperature` divides the logits (training samples at 1; test-time search
  // above 1 spreads a converged policy's choices); the log-probabilities are of what was drawn
  // from. Masked options stay masked at any temperature > 0.
  Sampled sample(Family family, const std::vector<float>& observation,
                 const std::optional<Choice>& previous, std::mt19937_64& rng, double temperature = 1.0);

  std::string serialize() const;
  Status load(std::string_view bytes);

  PolicyNetworkImpl& network() { return *network_; }

 private:
  Device device_;
  std::shared_ptr<PolicyNetworkImpl> network_;
};

// "keep" as a decision index for `knob` of `family` on `device` (its option count).
uint16_t keep_decision(Family family, Device device, int knob);

}  // namespace drk::schedule
