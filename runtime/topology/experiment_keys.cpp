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

ExperimentViews& views() {
  static ExperimentViews registered;
  return registered;
}

}  // namespace

void register_experiment_views(ExperimentViews experiment_views) { views() = std::move(experiment_views); }

Result<std::vector<ExperimentView>> experiment_views(const YAML::Node& experiment) {
  if (views()) return views()(experiment);
  return std::vector<ExperimentView>{ExperimentView{"", experiment, YAML::Node(YAML::NodeType::Undefined)}};
}

}  // namespace drk::runtime
