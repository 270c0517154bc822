#include "runtime/topology/experiment_keys.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace drk::runtime {
namespace {

std::map<std::string, ExperimentKey>& registry() {
  static std::map<std::string, ExperimentKey> keys = {
      {"steps", ExperimentKey{"steps", ValueKind::integer, "8"}}};
  return keys;
}

}  // namespace

void register_experiment_keys(const std::vector<ExperimentKey>& keys) {
  for (const auto& key : keys) {
    auto [it, inserted] = registry().emplace(key.path, key);
    if (inserted) continue;
    // Two parts of the system reading one key as different kinds is a bug of ours.
    if (it->second.kind != key.kind) {
      throw std::logic_error("experiment key '" + key.path + "' is registered with two kinds");
    }
    ExperimentKey& known = it->second;
    if (known.choices.empty()) known.choices = key.choices;
    if (key.minimum && (!known.minimum || *key.minimum > *known.minimum)) {
      known.minimum = key.minimum;
      known.why = key.why;
    }
  }
}

namespace {

std::vector<ExperimentCheck>& checks() {
  static std::vector<ExperimentCheck> registered;
  return registered;
}

}  // namespace

void register_experiment_check(ExperimentCheck check) { checks().push_back(std::move(check)); }

std::vector<ExperimentCheck> registered_experiment_checks() { return checks(); }

std::vector<ExperimentKey> registered_experiment_keys() {
  std::vector<ExperimentKey> keys;
  for (const auto& [path, key] : registry()) keys.push_back(key);
  return keys;
}

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

}  // namespace drk::runtime
