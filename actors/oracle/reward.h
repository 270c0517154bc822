// Reward: turns a verdict into a scalar, in KernelGYM's form (docs/topology.md, `reward.`), with the
// further objectives of the original write-ups (memory, energy, convergence), each off (weight
// 0) unless experiment.reward (or a training stage) weighs it:
//   R = w_correct * correct + w_speedup * min(speedup, cap) + w_coverage * coverage * correct
//     + correct * (w_memory * memory + w_energy * min(energy ratio, energy_cap)
//                  + w_convergence * convergence)
// times, where the task has a shape range (docs/tasks.md, "Shape ranges"), the share of shapes the
// candidate handles, counting the task's own, the drawn ones and the timed ones:
// 1 - w_shapes * (1 - (1 + handled) / (1 + tried)), so that a kernel that declines most of the
// range (DRK_E_UNSUPPORTED_SHAPE) earns less than one that handles it all; and 0 for a candidate
// that did not compile or was judged dishonest. Where the range declares timed shapes, speedup is
// EvalResult.shapesSpeedup (the geometric mean over the task's shape and the timed ones handled),
// so a kernel fast at one shape only is not paid as if it were fast at all. Speedup is already 0
// for an incorrect candidate (the Evaluator reports it so). The terms, each from the verdict:
//   memory      1 / (1 + held / memory_scale): held is the device memory the candidate kept
//               beyond its tensors (CUDA: Evidence.gpuMemoryBytes, its allocations and
//               workspace); 1 where nothing is measured (the CPU)
//   energy      reference / candidate energy per call (NVML; GpuEnergy), when both batches
//               resolved the counter (eval.energy_min_ms > 0 on CUDA); 0 where not measured
//   convergence how close the candidate comes to the exact answer: the float32 reference's error
//               against float64 over the candidate's (Evidence.precision*), at most 1; 1 when
//               the candidate is as accurate as the reference or no float64 check ran
//
// Thread-safety: pure functions over values.
#pragma once

#include <string>

#include <yaml-cpp/yaml.h>

#include "messages/drk.capnp.h"
#include "base/result.h"

namespace drk::oracle {

struct RewardWeights {
  double correct = 0.5;
  double speedup = 0.5;
  double speedup_cap = 3.0;
  double coverage = 0.0;  // the profiling reward (PR)
  double memory = 0.0;
  double memory_scale_mb = 256.0;
  double energy = 0.0;
  double energy_cap = 3.0;
  double convergence = 0.0;
  double shapes = 1.0;  // how much the shapes of the range a candidate declines cost it
};

// PR's weight when experiment.reward.coverage is absent: on for CUDA runs, where CUPTI measures
// coverage; off on the CPU, where coverage is 1 for every correct candidate and the term would
// only add to the correctness weight.
inline constexpr double kDefaultCudaCoverageWeight = 0.25;

// Reads experiment.reward {correct, speedup, speedup_cap, coverage, memory, memory_scale_mb,
// energy, energy_cap, convergence, shapes}; absent keys keep defaults, coverage's by experiment.device
// (above).
Result<RewardWeights> reward_weights_from(const YAML::Node& experiment);

double reward(const RewardWeights& weights, msg::Verdict::Reader verdict, double coverage);

}  // namespace drk::oracle
