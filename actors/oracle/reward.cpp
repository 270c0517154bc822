#include "actors/oracle/reward.h"

#include <algorithm>

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
    else
      return make_error(Errc::invalid_argument,
                        "experiment.reward." + key +
                            " is unknown: the keys are correct, speedup, speedup_cap, coverage");
  }
  return weights;
}

double reward(const RewardWeights& weights, msg::Verdict::Reader verdict, double coverage) {
  const auto result = verdict.getResult();
  if (!result.getCompiled() || !verdict.getHonest()) return 0.0;
  const double correct = result.getCorrect() ? 1.0 : 0.0;
  const double speedup = result.getCorrect() ? std::min(result.getSpeedup(), weights.speedup_cap) : 0.0;
  return weights.correct * correct + weights.speedup * speedup +
         weights.coverage * coverage * correct;
}

}  // namespace drk::oracle
