// RollbackMonitor: the Learner's rule for returning to the last stable policy version when the
// mean reward collapses (docs/topology.md, "Rollback and diagnostic mode").
//
// Each training step is observed once, in order, with the mean reward of its turns and the
// policy version that generated them (its behaviour version). With R = the best mean reward
// among the last `window` stable steps:
//   - the step is a fall when R > 0 and its mean reward < (1 - drop) * R;
//   - otherwise it is stable: it joins the window, the count of falls restarts, and diagnostic
//     mode (if on) ends;
//   - the `patience`-th fall in a row decides a rollback to the behaviour version of the most
//     recent stable step (the last version whose rollouts did not fall), the count restarts and
//     diagnostic mode begins. The window is kept: the new version must reach the old level.
// The first step is stable (there is nothing to fall from). Defaults: drop 0.15, patience 3,
// window 5.
//
// Thread-safety: a value; one owner.
#pragma once

#include <cstdint>
#include <deque>
#include <utility>

namespace drk::learner {

struct RollbackSettings {
  bool enabled = true;
  double drop = 0.15;
  uint32_t patience = 3;
  uint32_t window = 5;
};

struct RollbackDecision {
  bool fall = false;
  bool rollback = false;
  uint32_t target_version = 0;  // when rollback
  double reference = 0.0;       // R when the step was observed (0: no stable step yet)
};

class RollbackMonitor {
 public:
  explicit RollbackMonitor(RollbackSettings settings) : settings_(settings) {}

  RollbackDecision observe(uint32_t behaviour_version, double mean_reward);

  bool diagnostic() const { return diagnostic_; }
  uint32_t falls_in_a_row() const { return falls_in_a_row_; }

 private:
  RollbackSettings settings_;
  std::deque<std::pair<uint32_t, double>> stable_;  // (behaviour version, mean reward), oldest first
  uint32_t falls_in_a_row_ = 0;
  bool diagnostic_ = false;
};

}  // namespace drk::learner
