#include "actors/oracle/cost_model.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <random>
#include <string>

#include <torch/torch.h>

namespace drk::oracle {
namespace {

// A tensor of `shape` drawn uniformly in +-1/sqrt(fan_in) (PyTorch's default for Linear) from
// `rng`, so that members differ and the model is reproducible without LibTorch's generator.
torch::Tensor uniform_tensor(std::vector<int64_t> shape, int64_t fan_in, std::mt19937_64& rng) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  std::uniform_real_distribution<float> uniform(static_cast<float>(-bound), static_cast<float>(bound));
  auto tensor = torch::empty(shape);
  float* data = tensor.data_ptr<float>();
  for (int64_t index = 0; index < tensor.numel(); ++index) data[index] = uniform(rng);
  return tensor.requires_grad_(true);
}

// The K members as one batched network: member k's layer l is weights[l][k] (fan_in x fan_out)
// and biases[l][k] (1 x fan_out); one baddbmm per layer runs every member at once, and Adam's
// per-element state keeps the members' training independent.
struct Ensemble {
  std::vector<torch::Tensor> weights, biases;
  std::unique_ptr<torch::optim::Adam> optimizer;

  Ensemble(size_t members, size_t feature_size, size_t hidden, double learning_rate, std::mt19937_64& rng) {
    const auto k = static_cast<int64_t>(members);
    const std::vector<int64_t> widths = {static_cast<int64_t>(feature_size), static_cast<int64_t>(hidden),
                                         static_cast<int64_t>(hidden), 1};
    std::vector<torch::Tensor> parameters;
    for (size_t layer = 0; layer + 1 < widths.size(); ++layer) {
      weights.push_back(uniform_tensor({k, widths[layer], widths[layer + 1]}, widths[layer], rng));
      biases.push_back(uniform_tensor({k, 1, widths[layer + 1]}, widths[layer], rng));
      parameters.push_back(weights.back());
      parameters.push_back(biases.back());
    }
    optimizer = std::make_unique<torch::optim::Adam>(parameters, torch::optim::AdamOptions(learning_rate));
  }

  // inputs: members x rows x features -> members x rows.
  torch::Tensor forward(torch::Tensor x) const {
    for (size_t layer = 0; layer < weights.size(); ++layer) {
      x = torch::baddbmm(biases[layer], x, weights[layer]);
      if (layer + 1 < weights.size()) x = torch::relu(x);
    }
    return x.squeeze(2);
  }
};

Status check_features(std::span<const float> features, size_t feature_size) {
  if (features.size() != feature_size) {
    return make_error(Errc::invalid_argument, "cost model: a feature vector of " + std::to_string(features.size()) +
                                                  " numbers, the model reads " + std::to_string(feature_size) +
                                                  " (candidate_feature_size())");
  }
  for (const float value : features) {
    if (!std::isfinite(value)) {
      return make_error(Errc::invalid_argument, "cost model: a feature is not finite; features must be numbers");
    }
  }
  return {};
}

}  // namespace

struct CostModel::State {
  size_t feature_size = 0;
  CostModelOptions options;
  std::unique_ptr<Ensemble> ensemble;
  std::vector<std::mt19937_64> bootstrap;  // each member's own draws of its mini-batches
  std::deque<std::vector<float>> features;  // the replay buffer, oldest first
  std::deque<float> rewards;
  size_t observed = 0;
};

CostModel::CostModel(std::unique_ptr<State> state) : state_(std::move(state)) {}
CostModel::CostModel(CostModel&&) noexcept = default;
CostModel& CostModel::operator=(CostModel&&) noexcept = default;
CostModel::~CostModel() = default;

Result<CostModel> CostModel::create(size_t feature_size, const CostModelOptions& options) {
  if (feature_size == 0 || options.members < 2 || options.hidden == 0 || options.buffer_capacity == 0 ||
      options.batch_size == 0 || !(options.learning_rate > 0)) {
    return make_error(Errc::invalid_argument,
                      "cost model: needs features >= 1, members >= 2, hidden >= 1, buffer_capacity >= 1, "
                      "batch_size >= 1 and a positive learning rate; got features " +
                          std::to_string(feature_size) + ", members " + std::to_string(options.members) +
                          ", hidden " + std::to_string(options.hidden));
  }
  auto state = std::make_unique<State>();
  state->feature_size = feature_size;
  state->options = options;
  std::mt19937_64 seeds(options.seed);
  state->ensemble =
      std::make_unique<Ensemble>(options.members, feature_size, options.hidden, options.learning_rate, seeds);
  for (size_t member = 0; member < options.members; ++member) state->bootstrap.emplace_back(seeds());
  return CostModel(std::move(state));
}

Status CostModel::observe(std::span<const float> features, double reward) {
  if (auto valid = check_features(features, state_->feature_size); !valid) return valid;
  if (!std::isfinite(reward)) {
    return make_error(Errc::invalid_argument, "cost model: a reward that is not finite cannot be learned");
  }
  state_->features.emplace_back(features.begin(), features.end());
  state_->rewards.push_back(static_cast<float>(reward));
  if (state_->features.size() > state_->options.buffer_capacity) {
    state_->features.pop_front();
    state_->rewards.pop_front();
  }
  ++state_->observed;
  return {};
}

void CostModel::train(size_t steps) {
  const size_t buffered = state_->features.size();
  if (buffered == 0) return;
  const size_t members = state_->bootstrap.size();
  const size_t batch = state_->options.batch_size;
  const size_t width = state_->feature_size;
  std::vector<float> inputs(members * batch * width), targets(members * batch);
  std::uniform_int_distribution<size_t> draw(0, buffered - 1);
  for (size_t step = 0; step < steps; ++step) {
    for (size_t member = 0; member < members; ++member) {
      for (size_t row = 0; row < batch; ++row) {
        const size_t sample = draw(state_->bootstrap[member]);
        const size_t at = member * batch + row;
        std::copy(state_->features[sample].begin(), state_->features[sample].end(), inputs.begin() + at * width);
        targets[at] = state_->rewards[sample];
      }
    }
    const auto k = static_cast<int64_t>(members), b = static_cast<int64_t>(batch);
    const auto x = torch::from_blob(inputs.data(), {k, b, static_cast<int64_t>(width)});
    const auto y = torch::from_blob(targets.data(), {k, b});
    state_->ensemble->optimizer->zero_grad();
    // Summed over members: each member's gradient is that of its own mean squared error.
    const auto loss = (state_->ensemble->forward(x) - y).pow(2).mean(1).sum();
    loss.backward();
    state_->ensemble->optimizer->step();
  }
}

Result<RewardPrediction> CostModel::predict(std::span<const float> features) const {
  auto predictions = predict(std::vector<std::vector<float>>{{features.begin(), features.end()}});
  if (!predictions) return predictions.error();
  return predictions->front();
}

Result<std::vector<RewardPrediction>> CostModel::predict(const std::vector<std::vector<float>>& rows) const {
  if (rows.empty()) return std::vector<RewardPrediction>{};
  const auto width = static_cast<int64_t>(state_->feature_size);
  auto inputs = torch::empty({static_cast<int64_t>(rows.size()), width});
  auto input_rows = inputs.accessor<float, 2>();
  for (size_t row = 0; row < rows.size(); ++row) {
    if (auto valid = check_features(rows[row], state_->feature_size); !valid) return valid.error();
    for (int64_t column = 0; column < width; ++column) {
      input_rows[static_cast<int64_t>(row)][column] = rows[row][static_cast<size_t>(column)];
    }
  }
  torch::NoGradGuard no_grad;
  const auto members = static_cast<int64_t>(state_->bootstrap.size());
  const auto stacked = state_->ensemble->forward(inputs.unsqueeze(0).expand({members, -1, -1}));  // members x rows
  const auto means = stacked.mean(0);
  const auto deviations = (stacked - means).pow(2).mean(0).sqrt();
  auto mean_values = means.accessor<float, 1>();
  auto deviation_values = deviations.accessor<float, 1>();
  std::vector<RewardPrediction> predictions(rows.size());
  for (size_t row = 0; row < rows.size(); ++row) {
    predictions[row] = {mean_values[static_cast<int64_t>(row)], deviation_values[static_cast<int64_t>(row)]};
  }
  return predictions;
}

size_t CostModel::feature_size() const { return state_->feature_size; }
size_t CostModel::members() const { return state_->bootstrap.size(); }
size_t CostModel::observed() const { return state_->observed; }

}  // namespace drk::oracle
