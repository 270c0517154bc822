#include "actors/oracle/reward.h"

#include <algorithm>

#include "judging/shapes_tried.h"

namespace drk::oracle {

Result<RewardWeights> reward_weights_from(const YAML::Node& experiment) {
  RewardWeights weights;
  if (experiment && experiment["device"] && experiment["device"].IsScalar() &&
      experiment["device"].Scalar() == "cuda")
    weights.coverage = kDefaultCudaCoverageWeight;
  const YAML::Node node = experiment ? experiment["reward"] : YAML::Node();
  if (!node) return weights;
  if (!node.IsMap()) {
    return make_error(Errc::invalid_argument,
                      "experiment.reward must be a map, e.g. `reward: {correct: 0.5, speedup: 0.5}`");
  }
  for (const auto& entry : node) {
    const auto key = entry.first.as<std::string>();
    double value = 0;
    try {
      value = entry.second.as<double>();
    } catch (const YAML::Exception&) {
      return make_error(Errc::invalid_argument,
                        "experiment.reward." + key + " must be a number, e.g. `" + key + ": 0.5`");
    }
    if (key == "correct") weights.correct = value;
    else if (key == "speedup") weights.speedup = value;
    else if (key == "speedup_cap") weights.speedup_cap = value;
    else if (key == "coverage") weights.coverage = value;
    else if (key == "memory") weights.memory = value;
    else if (key == "memory_scale_mb") weights.memory_scale_mb = value;
    else if (key == "energy") weights.energy = value;
    else if (key == "energy_cap") weights.energy_cap = value;
    else if (key == "convergence") weights.convergence = value;
    else if (key == "shapes") weights.shapes = value;
    else
      return make_error(Errc::invalid_argument,
                        "experiment.reward." + key +
                            " is unknown: the keys are correct, speedup, speedup_cap, coverage, memory, "
                            "memory_scale_mb, energy, energy_cap, convergence, shapes");
  }
  if (weights.shapes < 0 || weights.shapes > 1)
    return make_error(Errc::invalid_argument, "experiment.reward.shapes is a share from 0 (declined shapes cost "
                                              "nothing) to 1 (the default: the reward scales with the shapes handled)");
  if (weights.memory_scale_mb <= 0 || weights.energy_cap <= 0 || weights.speedup_cap <= 0) {
    return make_error(Errc::invalid_argument,
                      "experiment.reward: speedup_cap, energy_cap and memory_scale_mb must be positive");
  }
  return weights;
}

namespace {

double memory_term(const RewardWeights& weights, msg::EvalResult::Reader result) {
  const double held_mb = static_cast<double>(result.getEvidence().getGpuMemoryBytes()) / (1024.0 * 1024.0);
  return 1.0 / (1.0 + held_mb / weights.memory_scale_mb);
}

double energy_term(const RewardWeights& weights, msg::EvalResult::Reader result) {
  if (!result.hasGpu() || !result.getGpu().hasEnergy()) return 0.0;
  const auto energy = result.getGpu().getEnergy();
  const double candidate = energy.getCandidateMillijoulesPerCall();
  const double reference = energy.getReferenceMillijoulesPerCall();
  if (!energy.getAvailable() || !energy.getResolved() || candidate <= 0.0 || reference <= 0.0) return 0.0;
  return std::min(reference / candidate, weights.energy_cap);
}

double convergence_term(msg::EvalResult::Reader result) {
  const auto evidence = result.getEvidence();
  const double error = evidence.getPrecisionError();
  if (!evidence.getPrecisionChecked() || error <= evidence.getReferencePrecisionError()) return 1.0;
  return evidence.getReferencePrecisionError() / error;
}

}  // namespace

double reward(const RewardWeights& weights, msg::Verdict::Reader verdict, double coverage) {
  const auto result = verdict.getResult();
  if (!result.getCompiled() || !verdict.getHonest()) return 0.0;
  if (!result.getCorrect()) return 0.0;
  const double speedup = result.getTimedShapes().size() > 0 ? result.getShapesSpeedup() : result.getSpeedup();
  double total = weights.correct + weights.speedup * std::min(speedup, weights.speedup_cap) + weights.coverage * coverage;
  // Terms that read more of the verdict, only when weighed.
  if (weights.memory != 0.0) total += weights.memory * memory_term(weights, result);
  if (weights.energy != 0.0) total += weights.energy * energy_term(weights, result);
  if (weights.convergence != 0.0) total += weights.convergence * convergence_term(result);
  if (const judging::ShapesTried shapes = judging::shapes_tried(result); shapes.tried > 0) {
    const double handled_share = (1.0 + shapes.handled) / (1.0 + shapes.tried);
    total *= 1.0 - weights.shapes * (1.0 - handled_share);
  }
  return total;
}

}  // namespace drk::oracle
