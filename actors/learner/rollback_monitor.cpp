#include "actors/learner/rollback_monitor.h"

#include <algorithm>

namespace drk::learner {

RollbackDecision RollbackMonitor::observe(uint32_t behaviour_version, double mean_reward) {
  RollbackDecision decision;
  for (const auto& [version, reward] : stable_) decision.reference = std::max(decision.reference, reward);
  decision.fall = settings_.enabled && !stable_.empty() && decision.reference > 0.0 &&
                  mean_reward < (1.0 - settings_.drop) * decision.reference;
  if (!decision.fall) {
    stable_.emplace_back(behaviour_version, mean_reward);
    while (stable_.size() > std::max<uint32_t>(settings_.window, 1)) stable_.pop_front();
    falls_in_a_row_ = 0;
    diagnostic_ = false;
    return decision;
  }
  if (++falls_in_a_row_ >= std::max<uint32_t>(settings_.patience, 1)) {
    decision.rollback = true;
    decision.target_version = stable_.back().first;
    falls_in_a_row_ = 0;
    diagnostic_ = true;
  }
  return decision;
}

}  // namespace drk::learner
