// RunHistory: what a finished (or running) training run recorded, read back for `drk report`:
// its steps (mean reward, best speedup, coverage, Fast@p per step), the best verified kernel of
// each task with its source, the hack attempts the Verifier caught grouped by check, and the
// configuration the run resolved (RUN_DIR/topology.yaml).
//
// It reads RUN_DIR/archive.sqlite read-only (the Archivist may still be writing it: SQLite's WAL
// lets both), through actors/archivist/archive.h where the archive has a query and its own
// queries over the same schema otherwise.
//
// Per step s (from 1): coverage is the mean coverage of the step's measured, verified turns
// (correct and honest, not answered by the cost model); Fast@p is the share of the run's tasks
// whose best verified kernel up to and including step s is more than p times the reference.
//
// Thread-safety: a pure function of the files. Errors: a RUN_DIR that is not a folder, or an
// archive SQLite cannot read (io_error naming it and the fix). A folder without an archive or an
// archive without steps is no error: the history holds what exists and `missing` says what not.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/archivist/archive.h"
#include "base/result.h"

namespace drk::observe {

// The p of Fast@p drawn per step.
inline constexpr std::array<double, 2> kFastP = {1.0, 1.2};

struct StepPoint {
  uint32_t step = 0;  // from 1
  double mean_reward = 0;
  double best_speedup = 0;  // the step's best verified kernel
  double correct_fraction = 0;
  std::optional<double> coverage;  // none: no measured verified turn in the step
  std::array<double, kFastP.size()> fast_p{};
  uint32_t measured = 0, screened = 0;
  bool rolled_back = false;
};

struct TaskBest {
  std::string task;
  uint32_t candidates = 0;  // every candidate of the task
  uint32_t verified = 0;    // correct and honest
  uint32_t hacked = 0;      // dishonest
  // The best verified kernel; candidate_id is "" when the task has none. A task judged on two
  // kinds of device (or architectures, or dtypes) has one TaskBest for each, `judged_on` naming it
  // ("cuda sm_90 float16": archivist::judged_on).
  std::string candidate_id, judged_on;
  double speedup = 0, candidate_us = 0, reference_us = 0;
  uint32_t step = 0, policy_version = 0;  // step from 1
  uint32_t trials = 0, trials_passed = 0;
  std::string source;
  std::optional<double> remeasured_speedup;  // `drk archive remeasure`'s median, when run
  uint32_t remeasured_correct = 0;
};

// One check of the Verifier and the candidates it failed.
struct CaughtCheck {
  std::string check;  // its code ("outputs_unwritten"); "(no check named)" when none was recorded
  uint32_t candidates = 0;
  // The first such candidate (by step): its id, task, the feedback its Generator got (which
  // names the evidence) and its source.
  std::string example_id, example_task, example_feedback, example_source;
};

struct RunHistory {
  std::string run_dir;
  std::string name;       // the folder's own name
  std::string estimator;  // experiment.estimator ("trloo" when topology.yaml does not say)
  std::string label;      // "NAME (ESTIMATOR)": how the run's curves are named
  std::string topology_yaml;  // RUN_DIR/topology.yaml as written; "" when missing
  std::vector<StepPoint> steps;
  std::vector<TaskBest> tasks;
  std::vector<CaughtCheck> caught;  // most candidates first
  uint32_t candidates = 0, hacked = 0, screened = 0;
  archivist::OtherShapes other_shapes;  // the hard-coded-shape rate's parts
  // What could not be read, each naming the file and what to do.
  std::vector<std::string> missing;
};

Result<RunHistory> read_run_history(const std::string& run_dir);

}  // namespace drk::observe
