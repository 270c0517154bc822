#include "training/training_stages.h"

namespace drk::training {
namespace {

// `overlay`'s keys over `base`'s, maps merged key by key; both are left untouched.
YAML::Node merged(const YAML::Node& base, const YAML::Node& overlay) {
  if (!base.IsMap() || !overlay.IsMap()) return YAML::Clone(overlay);
  YAML::Node result = YAML::Clone(base);
  for (const auto& entry : overlay) {
    const std::string key = entry.first.Scalar();
    result[key] = result[key].IsDefined() ? merged(result[key], entry.second) : YAML::Clone(entry.second);
  }
  return result;
}

}  // namespace

Result<std::vector<TrainingStage>> read_training_stages(const YAML::Node& experiment) {
  const YAML::Node list = experiment && experiment.IsMap() ? experiment["training_stages"] : YAML::Node();
  YAML::Node base = experiment && experiment.IsMap() ? YAML::Clone(experiment) : YAML::Node(YAML::NodeType::Map);
  base.remove("training_stages");
  if (!list || list.IsNull()) return std::vector<TrainingStage>{TrainingStage{"", 0, 0, base}};
  if (!list.IsSequence() || list.size() == 0) {
    return make_error(Errc::invalid_argument,
                      "experiment.training_stages must be a non-empty list, e.g. "
                      "`training_stages: [{name: warmup, steps: 2, learning_rate: 0.1}, {name: main}]`");
  }
  std::vector<TrainingStage> stages;
  uint32_t first_step = 0;
  for (size_t index = 0; index < list.size(); ++index) {
    const YAML::Node entry = list[index];
    const std::string where = "experiment.training_stages[" + std::to_string(index) + "]";
    if (!entry.IsMap()) {
      return make_error(Errc::invalid_argument, where + " must be a map, e.g. `{name: main, steps: 6}`");
    }
    TrainingStage stage;
    stage.name = entry["name"] ? entry["name"].as<std::string>() : "stage" + std::to_string(index);
    const bool last = index + 1 == list.size();
    try {
      stage.steps = entry["steps"] ? entry["steps"].as<uint32_t>() : 0;
    } catch (const YAML::Exception&) {
      return make_error(Errc::invalid_argument, where + ".steps must be a whole number, e.g. `steps: 4`");
    }
    if (stage.steps == 0 && !last) {
      return make_error(Errc::invalid_argument,
                        where + " ('" + stage.name + "') needs `steps` >= 1: only the last stage may run to the end");
    }
    YAML::Node overrides = YAML::Clone(entry);
    overrides.remove("name");
    overrides.remove("steps");
    stage.first_step = first_step;
    stage.experiment = merged(base, overrides);
    first_step += stage.steps;
    stages.push_back(std::move(stage));
  }
  return stages;
}

size_t training_stage_at(const std::vector<TrainingStage>& stages, uint32_t step) {
  for (size_t index = 0; index + 1 < stages.size(); ++index) {
    if (step < stages[index].first_step + stages[index].steps) return index;
  }
  return stages.size() - 1;
}


Result<std::vector<runtime::ExperimentView>> training_stage_views(const YAML::Node& experiment) {
  auto stages = read_training_stages(experiment);
  if (!stages) return stages.error();
  const YAML::Node entries = experiment && experiment.IsMap() ? experiment["training_stages"] : YAML::Node();
  std::vector<runtime::ExperimentView> views;
  for (size_t index = 0; index < stages->size(); ++index) {
    TrainingStage& stage = (*stages)[index];
    runtime::ExperimentView view;
    view.label = stage.name.empty() ? "" : "training stage '" + stage.name + "'";
    view.experiment = std::move(stage.experiment);
    view.entry = entries.IsDefined() && entries.IsSequence() && index < entries.size()
                     ? entries[index]
                     : YAML::Node(YAML::NodeType::Undefined);
    views.push_back(std::move(view));
  }
  return views;
}

}  // namespace drk::training
