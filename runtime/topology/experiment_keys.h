// The keys of a topology's `experiment:` section that some part of the system reads, with the
// kind of value each takes. Roles register theirs (tools/drk/roles.cpp) before a topology is
// loaded; load_topology() then refuses, with the file and line, a key nobody reads (a typo
// that would otherwise be ignored silently), a value of the wrong kind, or one outside the key's
// choices or below its minimum, before anything starts. `steps` is the runtime's own (the head shows "step 3/8").
//
// A list of maps (`training_stages`) registers its own path with ValueKind::list_of_maps and the
// keys of its entries below "PATH[]." (e.g. "training_stages[].learning_rate").
//
// Training stages (experiment.training_stages, docs/topology.md): consecutive phases of the run,
// each {name, steps, ...keys that override the experiment's for its steps}. read_training_stages
// gives each stage with its view of the experiment (the stage's keys merged over the
// experiment's, maps key by key); an actor reads its keys from the view of the step at hand.
//
// Thread-safety: register from one thread before any topology is loaded; read afterwards. The
// stage functions are pure.
// Errors: read_training_stages returns invalid_argument naming the stage and the fix.
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

struct TrainingStage {
  std::string name;
  uint32_t first_step = 0;
  uint32_t steps = 0;      // 0: the last stage, without `steps`: until the end of the run
  YAML::Node experiment;   // the experiment as this stage sees it (an independent copy)
};

// A role's check of the experiment as a whole: the values its actors would refuse at start
// (settings that depend on each other, a model that cannot be built from them), so that
// load_topology refuses them first, with the line, instead of an actor that fails at every
// restart. Run on the experiment and on each training stage's view of it. An error's message
// begins with the key it is about ("experiment.mrs.band must be ..."): load_topology gives it
// that key's line.
using ExperimentCheck = std::function<Status(const YAML::Node& experiment)>;
void register_experiment_check(ExperimentCheck check);
std::vector<ExperimentCheck> registered_experiment_checks();

// The stages of experiment.training_stages in order; without that key, one stage named "" that
// sees the experiment as it is. Every stage but the last needs `steps` >= 1.
Result<std::vector<TrainingStage>> read_training_stages(const YAML::Node& experiment);

// The stage that step `step` (from 0) belongs to; past the last stage's steps, the last stage.
// `stages` is not empty.
size_t training_stage_at(const std::vector<TrainingStage>& stages, uint32_t step);

}  // namespace drk::runtime
