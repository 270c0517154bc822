// Training stages (experiment.training_stages, docs/topology.md): consecutive phases of the run,
// each {name, steps, ...keys that override the experiment's for its steps}. read_training_stages
// gives each stage with its view of the experiment (the stage's keys merged over the
// experiment's, maps key by key); an actor (the Learner, the Oracle) reads its keys from the
// view of the step at hand. training_stage_views gives the same stages to the topology's load
// (runtime::register_experiment_views), so that each role's check of the experiment runs on
// every stage's view and an error is placed in the stage's entry, with its line.
//
// Thread-safety: pure functions.
// Errors: invalid_argument naming the stage and the fix; the message begins with the key it is
// about ("experiment.training_stages[0] ('a') needs ...").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/result.h"
#include "runtime/topology/experiment_keys.h"

namespace drk::training {

struct TrainingStage {
  std::string name;
  uint32_t first_step = 0;
  uint32_t steps = 0;      // 0: the last stage, without `steps`: until the end of the run
  YAML::Node experiment;   // the experiment as this stage sees it (an independent copy)
};

// The stages of experiment.training_stages in order; without that key, one stage named "" that
// sees the experiment as it is. Every stage but the last needs `steps` >= 1.
Result<std::vector<TrainingStage>> read_training_stages(const YAML::Node& experiment);

// The stage that step `step` (from 0) belongs to; past the last stage's steps, the last stage.
// `stages` is not empty.
size_t training_stage_at(const std::vector<TrainingStage>& stages, uint32_t step);

// The stages as the views the topology's load checks (labelled "training stage 'NAME'").
Result<std::vector<runtime::ExperimentView>> training_stage_views(const YAML::Node& experiment);

}  // namespace drk::training
