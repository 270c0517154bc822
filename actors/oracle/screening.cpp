#include "actors/oracle/screening.h"

#include <algorithm>
#include <cmath>

namespace drk::oracle {
namespace {

constexpr size_t kStepsCounted = 256;  // per-step counts kept for the most recent steps

Result<double> share(const YAML::Node& section, const char* key, double fallback) {
  const YAML::Node value = section[key];
  if (!value) return fallback;
  double parsed = 0;
  try {
    parsed = value.as<double>();
  } catch (const YAML::Exception&) {
    parsed = -1;
  }
  if (!(parsed >= 0.0 && parsed <= 1.0)) {
    return make_error(Errc::invalid_argument, std::string("experiment.oracle.screening.") + key +
                                                  " must be a share in [0, 1], e.g. `" + key + ": 0.5`");
  }
  return parsed;
}

Result<uint32_t> count_key(const YAML::Node& section, const char* key, uint32_t fallback, uint32_t minimum) {
  const YAML::Node value = section[key];
  if (!value) return fallback;
  try {
    const auto parsed = value.as<int64_t>();
    if (parsed >= minimum && parsed <= 100000000) return static_cast<uint32_t>(parsed);
  } catch (const YAML::Exception&) {
  }
  return make_error(Errc::invalid_argument, std::string("experiment.oracle.screening.") + key +
                                                " must be a whole number >= " + std::to_string(minimum) + ", e.g. `" +
                                                key + ": " + std::to_string(fallback) + "`");
}

}  // namespace

Result<ScreeningSettings> screening_settings_from(const YAML::Node& experiment) {
  ScreeningSettings settings;
  if (!experiment || !experiment.IsMap() || !experiment["oracle"] || !experiment["oracle"]["screening"]) {
    return settings;
  }
  const YAML::Node section = experiment["oracle"]["screening"];
  if (!section.IsMap()) {
    return make_error(Errc::invalid_argument,
                      "experiment.oracle.screening must be a map, e.g. `screening: {enabled: true, measure_top: 0.5}`");
  }
  if (const YAML::Node enabled = section["enabled"]) {
    const std::string text = enabled.IsScalar() ? enabled.Scalar() : "";
    if (text != "true" && text != "false") {
      return make_error(Errc::invalid_argument,
                        "experiment.oracle.screening.enabled must be true or false, e.g. `enabled: true`");
    }
    settings.enabled = text == "true";
  }
  auto measure_top = share(section, "measure_top", settings.measure_top);
  if (!measure_top) return measure_top.error();
  auto explore = share(section, "explore", settings.explore);
  if (!explore) return explore.error();
  auto warmup = count_key(section, "warmup_samples", settings.warmup_samples, 0);
  if (!warmup) return warmup.error();
  auto window = count_key(section, "window", settings.window, 1);
  if (!window) return window.error();
  auto train_steps = count_key(section, "train_steps", settings.train_steps, 0);
  if (!train_steps) return train_steps.error();
  settings.measure_top = *measure_top;
  settings.explore = *explore;
  settings.warmup_samples = *warmup;
  settings.window = *window;
  settings.train_steps = *train_steps;
  return settings;
}

std::string_view screening_reason_name(ScreeningReason reason) {
  switch (reason) {
    case ScreeningReason::warmup: return "warmup";
    case ScreeningReason::unrankable: return "unrankable";
    case ScreeningReason::no_features: return "no_features";
    case ScreeningReason::repeated: return "repeated";
    case ScreeningReason::predicted_best: return "predicted_best";
    case ScreeningReason::uncertain: return "uncertain";
    case ScreeningReason::screened: return "screened";
  }
  return "unknown";
}

Result<Screener> Screener::create(const ScreeningSettings& settings, TaskScales scales,
                                  const CostModelOptions& model_options) {
  CostModelOptions options = model_options;
  options.seed = settings.seed;
  auto model = CostModel::create(candidate_feature_size(), options);
  if (!model) return model.error();
  return Screener(settings, std::move(scales), std::move(*model));
}

Screener::Screener(const ScreeningSettings& settings, TaskScales scales, CostModel model)
    : settings_(settings), scales_(std::move(scales)), model_(std::move(model)) {}

ScreeningDecision Screener::decide(msg::Candidate::Reader candidate) {
  const std::string id = candidate.getId().cStr();
  if (measured_ids_.count(id)) return {true, ScreeningReason::repeated, std::nullopt};
  auto features = candidate_features(candidate, scales_);
  ScreeningDecision decision{true, ScreeningReason::no_features, std::nullopt};
  if (features) decision = rank(candidate.getTask().cStr(), *features);
  count(id, candidate.getStep(), decision.measure);
  return decision;
}

ScreeningDecision Screener::rank(const std::string& task, const std::vector<float>& features) {
  auto& window = windows_[task];
  // Ranked among the window as it was before this arrival; then the arrival joins it.
  std::vector<std::vector<float>> rows(window.begin(), window.end());
  window.push_back(features);
  if (window.size() > settings_.window) window.pop_front();

  if (model_.observed() < settings_.warmup_samples) return {true, ScreeningReason::warmup, std::nullopt};
  rows.push_back(features);
  auto predictions = model_.predict(rows);
  if (!predictions) return {true, ScreeningReason::no_features, std::nullopt};
  const RewardPrediction own = predictions->back();
  const size_t earlier = rows.size() - 1;
  if (earlier < kMinimumWindow) return {true, ScreeningReason::unrankable, own};

  // Ties count half (the mid-rank): copies of one schedule, which a converging policy proposes
  // again and again, get one prediction, and counting only the strictly better would rank every
  // copy at the top of its tie and measure them all. "One prediction" within a few float32 ulps:
  // a BLAS may round one row of a batched product differently from an identical other row.
  double better = 0, more_uncertain = 0;
  const auto rank_against = [](float theirs, float ours) {
    if (std::abs(theirs - ours) <= 1e-5f * std::max({std::abs(theirs), std::abs(ours), 1e-3f})) return 0.5;
    return theirs > ours ? 1.0 : 0.0;
  };
  for (size_t row = 0; row < earlier; ++row) {
    better += rank_against((*predictions)[row].mean, own.mean);
    more_uncertain += rank_against((*predictions)[row].stddev, own.stddev);
  }
  const auto total = static_cast<double>(earlier);
  if (better < settings_.measure_top * total) {
    return {true, ScreeningReason::predicted_best, own};
  }
  if (more_uncertain < settings_.explore * total) {
    return {true, ScreeningReason::uncertain, own};
  }
  return {false, ScreeningReason::screened, own};
}

void Screener::observe(msg::Candidate::Reader candidate, double reward) {
  auto features = candidate_features(candidate, scales_);
  if (!features) return;  // measured because it does not fit the model; nothing to learn
  if (!model_.observe(*features, reward)) return;
  model_.train(settings_.train_steps);
}

void Screener::count(const std::string& id, uint32_t step, bool measured) {
  Counts& of_step = by_step_[step];
  (measured ? total_.measured : total_.screened) += 1;
  (measured ? of_step.measured : of_step.screened) += 1;
  if (by_step_.size() > kStepsCounted) by_step_.erase(by_step_.begin());
  if (!measured) return;
  measured_ids_.insert(id);
  measured_order_.push_back(id);
  if (measured_order_.size() > kRememberedIds) {
    measured_ids_.erase(measured_order_.front());
    measured_order_.pop_front();
  }
}

Screener::Counts Screener::counts_of_step(uint32_t step) const {
  const auto found = by_step_.find(step);
  return found == by_step_.end() ? Counts{} : found->second;
}

}  // namespace drk::oracle
