#include "actors/oracle/reward.h"

#include <algorithm>
#include <cstdio>

namespace drk::oracle {

Result<RewardWeights> reward_weights_from(const YAML::Node& experiment) {
  RewardWeights weights;
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

std::string feedback_summary(msg::Verdict::Reader verdict, double reward_value) {
  const auto result = verdict.getResult();
  char line[512];
  std::string text;
  if (!result.getCompiled()) {
    std::string log = result.getCompileLog().cStr();
    if (log.size() > 400) log = log.substr(0, 400) + "...";
    text = "did not compile: " + log;
  } else if (!verdict.getHonest()) {
    text = "rejected by the verifier:";
    for (auto check : verdict.getFailedChecks()) {
      text += std::string(" [") + check.getCode().cStr() + "] " + check.getEvidence().cStr() + ";";
    }
  } else if (!result.getCorrect()) {
    std::snprintf(line, sizeof line,
                  "compiled but incorrect: %u of %u trials passed, max abs error %.3g, max rel "
                  "error %.3g: %s",
                  result.getTrialsPassed(), result.getTrials(), result.getMaxAbsError(),
                  result.getMaxRelError(), result.getErrorText().cStr());
    text = line;
  } else {
    std::snprintf(line, sizeof line,
                  "correct (%u/%u trials), speedup %.2fx: candidate %.1f us (cv %.1f%%) vs "
                  "reference %.1f us",
                  result.getTrialsPassed(), result.getTrials(), result.getSpeedup(),
                  result.getCandidateTiming().getMedianUs(),
                  100.0 * result.getCandidateTiming().getCv(),
                  result.getReferenceTiming().getMedianUs());
    text = line;
    if (verdict.hasWarnings() && verdict.getWarnings().size() > 0) {
      text += "; verifier warnings:";
      for (auto warning : verdict.getWarnings()) text += std::string(" [") + warning.getCode().cStr() + "]";
    }
  }
  std::snprintf(line, sizeof line, "; reward %.3f", reward_value);
  return text + line;
}

}  // namespace drk::oracle
