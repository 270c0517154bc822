#include "runtime/experiment_keys.h"

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
    // Two parts of the system reading one key as different kinds is a bug of ours.
    if (!inserted && it->second.kind != key.kind) {
      throw std::logic_error("experiment key '" + key.path + "' is registered with two kinds");
    }
  }
}

std::vector<ExperimentKey> registered_experiment_keys() {
  std::vector<ExperimentKey> keys;
  for (const auto& [path, key] : registry()) keys.push_back(key);
  return keys;
}

}  // namespace drk::runtime
