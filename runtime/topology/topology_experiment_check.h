// The topology's `experiment` section: every key checked against the keys the roles registered
// (runtime/topology/experiment_keys.h: unknown keys and values of the wrong kind are errors), then the
// roles' own checks of each view of the experiment (the experiment itself, or the views the
// application registered: drkernel's training stages).
//
// Thread-safety: free functions; the registries are filled before any topology is loaded.
// Errors: reported to the Validator, at the key they name.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "runtime/topology/topology_validator.h"

namespace drk::runtime {

// The keys of `map` below `prefix` ("" or "eval.") against the registered experiment keys.
void read_experiment(const YAML::Node& map, const std::string& prefix, Validator& validator);
// The roles' checks (registered_experiment_checks) on each view (experiment_views); an error is
// placed at the key it names, in the view's entry where the view sets it.
void check_experiment(const YAML::Node& experiment, Validator& validator);

}  // namespace drk::runtime
