// The Learner's settings, read from the experiment (or a training stage's view of it): the
// step loop's sizes and timeouts, the estimator, the PPO clip, rejection sampling, rollback and
// the training stages; and the keys and whole-experiment check the Learner registers, so that
// load_topology finds a bad value with its file and line before any actor starts.
//
// Thread-safety: free functions and plain values. Errors: invalid_argument naming the key and
// the expected form.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "actors/learner/ppo_loss.h"
#include "actors/learner/rejection_sampling.h"
#include "actors/learner/rollback_monitor.h"
#include "kernels/catalog/task.h"
#include "messages/drk.capnp.h"
#include "runtime/topology/experiment_keys.h"
#include "base/result.h"
#include "runtime/topology/topology.h"
#include "training/training_stages.h"

namespace drk::learner {

// What a training stage sets (experiment.training_stages; the experiment's values without).
struct StageSettings {
  std::string name;
  double learning_rate = 1e-3;
  uint32_t ppo_epochs = 4;
  double kl_max = 0.0;  // 0: no trust region
};

struct Settings {
  uint64_t seed = 1;
  uint32_t steps = 1;
  uint32_t group_size = 4;
  uint32_t turns = 1;
  kernels::DeviceKind device = kernels::DeviceKind::cpu;
  msg::AdvantageEstimator estimator = msg::AdvantageEstimator::TRLOO;
  int64_t rollout_timeout_ms = 180'000;
  int64_t advantage_timeout_ms = 60'000;
  std::string tasks_dir;
  // experiment.init_policy: a run directory whose latest policy this run starts from when its own
  // directory holds no checkpoint yet (a warm start: the optimizer starts afresh, at version 0).
  std::string init_policy;
  std::vector<std::string> tasks;  // empty: all
  uint32_t tasks_per_step = 0;     // 0: every task every step (task_selection.h, tasks_of_step)
  std::vector<training::TrainingStage> stages;
  std::vector<StageSettings> stage_settings;  // one per stage
  PrsSettings prs;
  MrsSettings mrs;
  learner::PpoSettings ppo;
  RollbackSettings rollback;
  double diagnostic_learning_rate_scale = 0.5;
  // A trajectory played by a policy more than this many versions behind the one being trained
  // stays out of the update (asynchronous rollouts: a Generator that has not yet loaded the
  // newest weights, or that restarted from an older checkpoint).
  uint32_t max_staleness = 1;
  // experiment.learner.*: who trains. `policy`: this Learner trains the embedded policy.
  // `external`: a trainer outside drkernel trains a language model and reports each new version
  // over HTTP (actors/learner/policy_reports.h); step s waits for version >= s - max_staleness.
  bool external = false;
  // experiment.generator.backend is policy (or unset): the Generators render the embedded
  // policy's schedules, so that the run's tasks must be ones it renders.
  bool embedded_generator = true;
  std::string listen = "127.0.0.1";  // the address the policy endpoint listens on
  uint16_t port = 8100;               // 0: a free one (RUN_DIR/learner_endpoint says which)
  std::string token_file;             // beyond loopback: the bearer token (or $DRK_LEARNER_TOKEN)
};

// The settings of `experiment`; an error names the key.
Result<Settings> read_settings(const YAML::Node& experiment);

// The experiment keys the Learner reads (runtime/topology/experiment_keys.h).
std::vector<runtime::ExperimentKey> learner_experiment_keys();

// The settings the Learner would refuse at start (runtime::ExperimentCheck): an estimator or a
// device it does not know, a group of one, an MRS band that is not a range, bad training stages.
Status learner_experiment_check(const YAML::Node& experiment);

}  // namespace drk::learner
