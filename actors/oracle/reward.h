// Reward: turns a verdict into a scalar, in KernelGYM's form (field-notes.md §1):
//   R = w_correct * correct + w_speedup * min(speedup, cap) + w_coverage * coverage * correct
// and 0 for a candidate that did not compile or was judged dishonest. Speedup is already 0 for
// an incorrect candidate (the Evaluator reports it so).
//
// Thread-safety: pure functions over values.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "messages/drk.capnp.h"
#include "runtime/result.h"

namespace drk::oracle {

struct RewardWeights {
  double correct = 0.5;
  double speedup = 0.5;
  double speedup_cap = 3.0;
  double coverage = 0.0;  // the profiling reward (PR)
};

// PR's weight when experiment.reward.coverage is absent: on for CUDA runs, where CUPTI measures
// coverage; off on the CPU, where coverage is 1 for every correct candidate and the term would
// only add to the correctness weight.
inline constexpr double kDefaultCudaCoverageWeight = 0.25;

// Reads experiment.reward {correct, speedup, speedup_cap, coverage}; absent keys keep defaults,
// coverage's by experiment.device (above).
Result<RewardWeights> reward_weights_from(const YAML::Node& experiment);

double reward(const RewardWeights& weights, msg::Verdict::Reader verdict, double coverage);

}  // namespace drk::oracle
