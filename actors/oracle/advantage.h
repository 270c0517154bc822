// Advantages for the turns of one training step.
//
// Return G[i,t] = sum over t' >= t of r[i,t'] (gamma = 1). A group is every trajectory of the
// same task that reached turn t in this step (N_t members).
//   TRLOO: A[i,t] = G[i,t] - mean of G[j,t] over j != i   (A = G when N_t = 1); no std scaling.
//   GRPO:  A[i,t] = (G[i,t] - mean of G[j,t] over all j) / (std + 1e-6), for comparison: its
//          self-inclusive mean scales each turn by (1 - 1/N_t), the bias TRLOO removes.
//
// Thread-safety: pure function over values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace drk::oracle {

enum class Estimator { trloo, grpo };

struct TrajectoryRewards {
  std::string trajectory_id;
  std::string task;             // the group key with the turn
  std::vector<double> rewards;  // one per turn, in order
};

struct TurnAdvantage {
  std::string trajectory_id;
  uint32_t turn = 0;  // 1-based, as in candidate ids
  double return_value = 0;
  double advantage = 0;
};

std::vector<TurnAdvantage> compute_advantages(const std::vector<TrajectoryRewards>& trajectories,
                                              Estimator estimator);

}  // namespace drk::oracle
