// Archive: the durable record of an experiment in one SQLite file: every scored candidate
// (source, schedule, result, verdict, reward, the feedback its Generator got), every policy
// version, every step report (with its rollback, rejection-sampling and trust-region fields),
// and every trained turn as a training sample (the Learner's Trajectory copies: actions,
// log-probabilities, advantage, return, whether it entered the loss, and a language model's
// prompt and answer; docs/archive.md).
// Records are keyed by candidate id, version and step and written with INSERT OR REPLACE, so a
// message delivered twice (after a restart) is recorded once.
//
// Thread-safety: one Archive per thread. Several processes may open the same file (WAL mode):
// the Archivist writes, `drk archive` and the run summary read.
// Errors: io_error naming the file and SQLite's message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "messages/drk.capnp.h"
#include "base/result.h"
#include "base/sqlite_statement.h"

namespace drk::archivist {

struct BestKernel {
  std::string task;
  std::string candidate_id;
  double speedup = 0;
  double candidate_us = 0;
  double reference_us = 0;
  uint32_t policy_version = 0;
  // What it was judged on (EvalResult's tags): "cpu" | "cuda", "sm_90" | "x86_64", "float16";
  // "" for a result archived before the tags were.
  std::string device, architecture, dtype;
  // Its speedup over the task's shape and its timed shapes (EvalResult.shapesSpeedup); 0 when the
  // task declares none.
  double shapes_speedup = 0;
};

// "cuda sm_90 float16": what a best kernel was judged on; "untagged" for an older archive's.
std::string judged_on(const BestKernel& kernel);

// A task's best kernel evaluated again after the run (`drk archive remeasure`): the medians over
// `evaluations` fresh evaluations, and the lowest and highest speedup among them.
struct Remeasured {
  std::string task;
  std::string candidate_id;
  uint32_t evaluations = 0;  // correct ones among them; 0 when the kernel no longer passed
  double speedup = 0;
  double candidate_us = 0;
  double reference_us = 0;
  double speedup_low = 0;
  double speedup_high = 0;
};

struct StepRow {
  uint32_t step = 0;
  uint32_t policy_version = 0;
  double mean_reward = 0;
  double best_speedup = 0;
  double correct_fraction = 0;
  uint32_t trajectories = 0;
  double seconds = 0;
  bool finished = false;
  // From the step_training table (absent in archives of older runs: the defaults).
  bool rolled_back = false;
  uint32_t rolled_back_to = 0;
  bool diagnostic = false;
  uint32_t prs_rejected = 0, mrs_rejected = 0, mrs_vetoed = 0, ppo_epochs = 0;
  std::string stage;
  // From the step_screening table: turns measured and turns the Oracle's cost model answered.
  uint32_t measured = 0, screened = 0;
};

// One message of the conversation a language model was asked with.
struct PromptMessage {
  std::string role;  // system | user | assistant
  std::string content;
};

// One turn as a training sample (docs/archive.md gives the JSONL form).
struct TrainingSample {
  std::string candidate_id, trajectory_id, task, family;
  uint32_t turn = 0;  // from 1
  uint32_t step = 0, policy_version = 0;
  std::string feedback;   // the Feedback summary of the previous turn ("" for the first)
  std::string source;     // the candidate's source ("" if its Scored record is missing)
  std::string schedule;   // "family knob=value ..."
  double reward = 0, advantage = 0, return_value = 0;
  bool trained = false;
  std::string rejected_by;
  bool correct = false, honest = false;
  double speedup = 0, coverage = 0;
  bool screened = false;  // reward and correct are the Oracle's cost-model prediction, not measured
  std::vector<int64_t> actions;
  std::vector<double> logprobs, learner_logprobs;
  std::vector<bool> kept;
  // A language model's turn (generator.backend: openai): the whole conversation its request sent,
  // the answer and the served model. model is "" for the embedded policy's turns (and for turns
  // recorded before these existed), which have neither prompt nor answer.
  std::vector<PromptMessage> prompt;
  std::string answer, model;
};

struct TaskTally {
  std::string task;
  uint32_t candidates = 0;
  uint32_t compiled = 0;
  uint32_t verified = 0;  // correct and honest
  uint32_t rejected = 0;  // dishonest
  // Candidates tried at shapes beyond the task's own (its shape range or its second shapes), and
  // of them those that did not handle every one: declined one (DRK_E_UNSUPPORTED_SHAPE) or were
  // wrong at one (hardcoded_shape). Their ratio is the run's hard-coded-shape rate.
  uint32_t tried_at_other_shapes = 0;
  uint32_t hardcoded_shapes = 0;
  // The median of the reference's median time over the task's correct evaluations (0 if none):
  // one evaluation's reference time can be far off on a loaded machine, and a best-of speedup
  // picks exactly those, so the summary also divides by this.
  double reference_median_us = 0;
};

// A run's candidates tried at other shapes and those that did not handle them all, summed over its
// tasks' tallies: the hard-coded-shape rate is hardcoded / tried (docs/tasks.md, "Shape ranges").
struct OtherShapes {
  uint32_t tried = 0;
  uint32_t hardcoded = 0;
};
OtherShapes other_shapes(const std::vector<TaskTally>& tallies);

// A best kernel's time against its task's median reference time over the run (the summary's
// "vs median"), which one slow reference measurement cannot inflate; 0 without a time.
double speedup_vs_median(const TaskTally& tally, const BestKernel& kernel);

// KernelBench's suite scores over a run's tasks (every tally's task): Fast@p is the share whose
// best verified kernel is faster than p times the reference (a task without one counts as not
// fast); the geometric mean is over the tasks that have one. A task judged on several devices or
// dtypes counts its best. `against_median`: each best kernel's time against the task's median
// reference time over the run (the summary's "vs median"), which one slow reference measurement
// cannot inflate, instead of its own evaluation's speedup.
struct SuiteScores {
  uint32_t tasks = 0;
  uint32_t verified = 0;     // tasks with a verified kernel
  uint32_t fast_1_0 = 0;     // tasks faster than the reference
  uint32_t fast_1_2 = 0;     // tasks faster than 1.2 times the reference
  double geomean_speedup = 0;  // of the verified tasks' best speedups; 0 when none
};
SuiteScores suite_scores(const std::vector<TaskTally>& tallies, const std::vector<BestKernel>& best,
                         bool against_median = false);

class Archive {
 public:
  // Opens (creating if needed) the archive at `path`; read_only does not create.
  static Result<Archive> open(const std::string& path, bool read_only = false);
  static std::string default_path(const std::string& run_dir) { return run_dir + "/archive.sqlite"; }

  Status record_scored(msg::Scored::Reader scored);
  Status record_policy(msg::PolicyWeights::Reader weights);
  Status record_step(msg::StepReport::Reader report);
  // One trained step's trajectory, as the Learner sends it after the update.
  Status record_trajectory(msg::Trajectory::Reader trajectory);

  // The fastest correct, honest candidate per task and what it was judged on (device,
  // architecture, dtype), by task name: a task evaluated on two kinds of device has two.
  Result<std::vector<BestKernel>> best_per_task() const;
  Result<std::vector<StepRow>> steps() const;
  Result<std::vector<TaskTally>> tallies() const;
  // Every recorded turn, by step, trajectory and turn.
  Result<std::vector<TrainingSample>> training_samples() const;
  // The source of one candidate; not_found when the id is unknown.
  Result<std::string> source_of(const std::string& candidate_id) const;
  // Replaces the task's re-measurement.
  Status record_remeasured(const Remeasured& row);
  // By task; empty for an archive written before re-measurements existed.
  Result<std::vector<Remeasured>> remeasured() const;

  const std::string& path() const { return path_; }
  // A query of a reader's own (drk report, the dashboard) on this archive's connection; it must
  // not outlive the Archive.
  SqliteStatement query(const char* sql) const { return SqliteStatement(db_.get(), sql); }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close(db); }
  };
  Archive(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  Status exec(const char* sql) const;
  // The migration of an archive written before kAddedColumns (archive.cpp) existed.
  Status add_missing_columns() const;
  Error sqlite_error(const std::string& what) const;

  std::string path_;
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace drk::archivist
