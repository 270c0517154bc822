// CostModel: the Oracle's learned predictor of a candidate's reward, with its uncertainty.
//
// An ensemble of `members` small MLPs (LibTorch, CPU: features -> hidden -> hidden -> 1, ReLU),
// run as one batched network (one batched matrix product per layer for all members) with
// Adam's per-element state keeping the members' training independent. Members differ by their
// random initialisation and by their bootstrap: every training step, each member draws its own
// mini-batch with replacement from the replay buffer with its own random stream. A prediction
// is the members' mean and their standard deviation: the members agree where they saw data and
// drift apart away from it (the weights of inputs never seen active keep their different
// random values), so the stddev is the model's "I do not know".
//
// Online use: observe() each measured (features, reward) into a bounded replay buffer (the
// most recent `buffer_capacity`), then train(steps): `steps` Adam steps per member on
// mini-batches of `batch_size` (cheap: a few milliseconds for a handful of steps).
// Deterministic given `seed` (own random streams; LibTorch's global generator is not used).
//
// LibTorch stays in cost_model.cpp: this header does not include it.
// Thread-safety: none; one owner thread (the Oracle's).
// Errors: invalid_argument for options out of range, a feature vector of the wrong length or a
// non-finite number. Training with nothing observed is not an error: it does nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/result.h"

namespace drk::oracle {

struct CostModelOptions {
  size_t members = 5;
  size_t hidden = 64;
  size_t buffer_capacity = 4096;
  size_t batch_size = 64;
  double learning_rate = 3e-3;
  uint64_t seed = 1;
};

struct RewardPrediction {
  double mean = 0;
  double stddev = 0;  // across the members (population standard deviation)
};

class CostModel {
 public:
  // invalid_argument when feature_size, members, hidden, buffer_capacity or batch_size is 0,
  // members < 2 (no spread to measure) or the learning rate is not positive.
  static Result<CostModel> create(size_t feature_size, const CostModelOptions& options);

  CostModel(CostModel&&) noexcept;
  CostModel& operator=(CostModel&&) noexcept;
  ~CostModel();

  // Adds one measured sample (the oldest leaves a full buffer).
  Status observe(std::span<const float> features, double reward);
  // `steps` Adam steps per member on bootstrap mini-batches; nothing when nothing is observed.
  void train(size_t steps);

  Result<RewardPrediction> predict(std::span<const float> features) const;
  // One prediction per row, in one pass (rows all of feature_size()).
  Result<std::vector<RewardPrediction>> predict(const std::vector<std::vector<float>>& rows) const;

  size_t feature_size() const;
  size_t members() const;
  size_t observed() const;  // every sample ever observed, not only those still buffered

 private:
  struct State;
  explicit CostModel(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace drk::oracle
