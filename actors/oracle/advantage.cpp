#include "actors/oracle/advantage.h"

#include <cmath>
#include <map>
#include <utility>

namespace drk::oracle {

std::vector<TurnAdvantage> compute_advantages(const std::vector<TrajectoryRewards>& trajectories,
                                              Estimator estimator) {
  std::vector<TurnAdvantage> out;
  // (task, turn) -> indices into `out`
  std::map<std::pair<std::string, uint32_t>, std::vector<size_t>> groups;
  for (const auto& trajectory : trajectories) {
    double return_value = 0;
    std::vector<double> returns(trajectory.rewards.size());
    for (size_t t = trajectory.rewards.size(); t-- > 0;) {
      return_value += trajectory.rewards[t];
      returns[t] = return_value;
    }
    for (size_t t = 0; t < returns.size(); ++t) {
      const auto turn = static_cast<uint32_t>(t + 1);
      groups[{trajectory.task, turn}].push_back(out.size());
      out.push_back({trajectory.trajectory_id, turn, returns[t], 0.0});
    }
  }
  for (const auto& [key, members] : groups) {
    const double n = static_cast<double>(members.size());
    double sum = 0;
    for (size_t index : members) sum += out[index].return_value;
    if (estimator == Estimator::trloo) {
      for (size_t index : members) {
        auto& item = out[index];
        item.advantage = members.size() == 1 ? item.return_value
                                              : item.return_value - (sum - item.return_value) / (n - 1);
      }
    } else {
      const double mean = sum / n;
      double squares = 0;
      for (size_t index : members) squares += std::pow(out[index].return_value - mean, 2);
      const double stddev = std::sqrt(squares / n);
      for (size_t index : members) {
        out[index].advantage = (out[index].return_value - mean) / (stddev + 1e-6);
      }
    }
  }
  return out;
}

}  // namespace drk::oracle
