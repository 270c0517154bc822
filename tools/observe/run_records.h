// RunRecords: what a run's archive (RUN_DIR/archive.sqlite, actors/archivist/archive.h) has
// recorded so far, read while the Archivist writes it: every evaluated candidate and every step,
// and the run's tasks and steps (RUN_DIR/topology.yaml's experiment.tasks and .steps). The dashboard's snapshot
// (run_snapshot.h) and /metrics (run_metrics.h) are computed from it.
//
// refresh() reads only what is new: candidates past the last rowid read (a candidate recorded
// again after a restart comes back with a new rowid and replaces its record, kept by id), steps
// from the last one read. The archive is opened read-only, and not before it exists: a run whose
// Archivist has not started yet reads as one with nothing recorded. An archive of an older run
// without the evaluation phases' columns reads them as 0.
//
// Thread-safety: one thread at a time (the caller locks). Errors: refresh() returns io_error
// naming the archive when SQLite fails on an archive that exists; what was read before is kept.
#pragma once


#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "actors/archivist/archive.h"
#include "base/result.h"

namespace drk::observe {

// The outcome of an evaluated candidate. correct: correct, and the Verifier failed no check;
// hacked: the Verifier failed at least one check (whatever else it was); failed: honest but not
// correct (did not compile, wrong answers, too slow to finish); screened: not evaluated, the
// Oracle's cost model answered (docs/cost-model.md).
enum class Outcome { correct, hacked, failed, screened };
const char* outcome_name(Outcome outcome);

struct EvaluationRecord {
  std::string candidate_id;
  std::string task;
  std::string device;    // cpu | cuda
  std::string language;  // cpp | cuda
  std::string evaluator;
  uint32_t step = 0;
  int64_t recorded_unix_ms = 0;  // when the Archivist recorded it (after the Verifier and Oracle)
  bool compiled = false;
  bool compile_cached = false;
  bool correct = false;
  bool honest = false;
  bool screened = false;
  std::vector<std::string> failed_checks;
  double speedup = 0;
  // EvalResult's times (milliseconds): the whole evaluation and its phases.
  double eval_ms = 0, compile_wait_ms = 0, load_ms = 0, correctness_ms = 0, timing_ms = 0;

  Outcome outcome() const;
};

struct StepRecord {
  uint32_t step = 0;
  double mean_reward = 0;
  double best_speedup = 0;
  double correct_fraction = 0;
  double seconds = 0;
  bool finished = false;
};

// The evaluations recorded, counted: by outcome, the Verifier's failed checks by code, and the
// compile cache's hits and misses over evaluated (not screened) candidates.
struct OutcomeCounts {
  std::map<Outcome, uint64_t> outcomes;  // every outcome present, 0 when none
  std::map<std::string, uint64_t> failed_checks;
  uint64_t compile_cache_hits = 0;
  uint64_t compile_cache_misses = 0;
};

class RunRecords {
 public:
  explicit RunRecords(std::string run_dir);
  ~RunRecords();
  RunRecords(const RunRecords&) = delete;
  RunRecords& operator=(const RunRecords&) = delete;

  Status refresh();

  const std::string& run_dir() const { return run_dir_; }
  // By candidate id.
  const std::map<std::string, EvaluationRecord>& evaluations() const { return evaluations_; }
  // By step.
  const std::vector<StepRecord>& steps() const { return steps_; }
  // experiment.tasks of RUN_DIR/topology.yaml; empty when it names none.
  const std::vector<std::string>& experiment_tasks() const { return experiment_tasks_; }
  // experiment.steps of RUN_DIR/topology.yaml; 0 when it does not say.
  uint32_t planned_steps() const { return planned_steps_; }
  // The source of a recorded candidate (read once, then kept); "" when unknown.
  std::string source_of(const std::string& candidate_id);

 private:
  void read_topology();
  bool open_if_present();
  Status read_candidates();
  Status read_steps();

  std::string run_dir_;
  std::optional<archivist::Archive> archive_;  // once RUN_DIR/archive.sqlite exists
  int64_t last_candidate_rowid_ = 0;
  std::map<std::string, EvaluationRecord> evaluations_;
  std::vector<StepRecord> steps_;
  std::vector<std::string> experiment_tasks_;
  uint32_t planned_steps_ = 0;
  bool read_topology_ = false;
  std::map<std::string, std::string> sources_;
};

OutcomeCounts count_outcomes(const RunRecords& records);

}  // namespace drk::observe
