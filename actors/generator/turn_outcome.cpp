#include "actors/generator/turn_outcome.h"

namespace drk::generator {

TurnOutcome unevaluated_outcome(bool cuda) {
  TurnOutcome outcome;
  outcome.coverage = cuda ? 0.0 : 1.0;
  return outcome;
}

TurnOutcome turn_outcome(msg::Feedback::Reader feedback, bool cuda) {
  const auto verdict = feedback.getVerdict();
  const auto result = verdict.getResult();
  const bool predicted_correct = feedback.getScreened() && feedback.getReward() > 0;
  TurnOutcome outcome;
  outcome.reward = feedback.getReward();
  outcome.compiled = result.getCompiled() || predicted_correct;
  outcome.correct = result.getCorrect() || predicted_correct;
  outcome.honest = verdict.getHonest();
  outcome.speedup = result.getSpeedup();
  outcome.coverage = !cuda ? 1.0 : result.hasGpu() ? result.getGpu().getCoverage() : 0.0;
  outcome.screened = feedback.getScreened();
  return outcome;
}

void write_outcome(const TurnOutcome& outcome, msg::Turn::Builder turn) {
  turn.setReward(outcome.reward);
  turn.setCorrect(outcome.correct);
  turn.setHonest(outcome.honest);
  turn.setSpeedup(outcome.speedup);
  turn.setCoverage(outcome.coverage);
  turn.setScreened(outcome.screened);
}

}  // namespace drk::generator
