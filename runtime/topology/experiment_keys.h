// The keys of a topology's `experiment:` section that some part of the system reads, with the
// kind of value each takes. Roles register theirs (tools/drk/roles.cpp) before a topology is
// loaded; load_topology() then refuses, with the file and line, a key nobody reads (a typo
// that would otherwise be ignored silently), a value of the wrong kind, or one outside the key's
// choices or below its minimum, before anything starts. `steps` is the runtime's own (the head shows "step 3/8").
//
// A list of maps (`training_stages`) registers its own path with ValueKind::list_of_maps and the
// keys of its entries below "PATH[]." (e.g. "training_stages[].learning_rate").
//
// Views: an application whose experiment has parts that see it their own way (drkernel's
// training stages, training/training_stages.h) registers how to find them; the roles' checks
// then run on each view, and an error is placed at its key in the view's own entry where the
// view sets it.
//
// Thread-safety: register from one thread before any topology is loaded; read afterwards.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"

namespace drk::runtime {

enum class ValueKind {
  integer,       // a non-negative whole number
  number,        // any number
  flag,          // true or false (YAML's spellings: yes, no, on, off too)
  text,          // a scalar
  text_or_list,  // a scalar or a list of scalars
  list_of_maps,  // a list of maps whose keys are registered below "PATH[]."
};

struct ExperimentKey {
  std::string path;     // dotted below `experiment`, e.g. "eval.trials"
  ValueKind kind;
  std::string example;  // the value as a person would write it, e.g. "5"
  // Checked at load too, where set: the values a text key may take, the least value of a number
  // or an integer, and why (the error quotes it), e.g. "TRLOO compares each sample with the others".
  std::vector<std::string> choices = {};
  std::optional<double> minimum = std::nullopt;
  std::string why = {};
};

// Registering the same path twice with the same kind is harmless; the choices and the least
// value of either registration are kept (the strictest).
void register_experiment_keys(const std::vector<ExperimentKey>& keys);
std::vector<ExperimentKey> registered_experiment_keys();  // sorted by path

// A role's check of the experiment as a whole: the values its actors would refuse at start
// (settings that depend on each other, a model that cannot be built from them), so that
// load_topology refuses them first, with the line, instead of an actor that fails at every
// restart. Run on each view of the experiment (below). An error's message
// begins with the key it is about ("experiment.mrs.band must be ..."): load_topology gives it
// that key's line.
using ExperimentCheck = std::function<Status(const YAML::Node& experiment)>;
void register_experiment_check(ExperimentCheck check);
std::vector<ExperimentCheck> registered_experiment_checks();

// One way the experiment is seen by a part of the run.
struct ExperimentView {
  std::string label;      // what its errors begin with ("training stage 'warmup'"); "" for none
  YAML::Node experiment;  // the experiment as this view sees it
  YAML::Node entry;       // where the view sets its own keys; undefined for none
};

// The views of an experiment, or an error whose message begins with the key it is about
// ("experiment.training_stages must be ..."): load_topology gives it that key's line.
using ExperimentViews = std::function<Result<std::vector<ExperimentView>>(const YAML::Node& experiment)>;
// Registering again replaces the views registered before.
void register_experiment_views(ExperimentViews views);
// The registered views of `experiment`; without any registered, the experiment as it is.
Result<std::vector<ExperimentView>> experiment_views(const YAML::Node& experiment);

}  // namespace drk::runtime
