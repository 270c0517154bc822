// Archive: the durable record of an experiment in one SQLite file: every scored candidate
// (source, schedule, result, verdict, reward), every policy version, every step report.
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
#include "runtime/result.h"

namespace drk::archivist {

struct BestKernel {
  std::string task;
  std::string candidate_id;
  double speedup = 0;
  double candidate_us = 0;
  double reference_us = 0;
  uint32_t policy_version = 0;
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
};

struct TaskTally {
  std::string task;
  uint32_t candidates = 0;
  uint32_t compiled = 0;
  uint32_t verified = 0;  // correct and honest
  uint32_t rejected = 0;  // dishonest
};

class Archive {
 public:
  // Opens (creating if needed) the archive at `path`; read_only does not create.
  static Result<Archive> open(const std::string& path, bool read_only = false);
  static std::string default_path(const std::string& run_dir) { return run_dir + "/archive.sqlite"; }

  Status record_scored(msg::Scored::Reader scored);
  Status record_policy(msg::PolicyWeights::Reader weights);
  Status record_step(msg::StepReport::Reader report);

  // The fastest correct, honest candidate per task, by task name.
  Result<std::vector<BestKernel>> best_per_task() const;
  Result<std::vector<StepRow>> steps() const;
  Result<std::vector<TaskTally>> tallies() const;
  // The source of one candidate; not_found when the id is unknown.
  Result<std::string> source_of(const std::string& candidate_id) const;

  const std::string& path() const { return path_; }

 private:
  struct Closer {
    void operator()(sqlite3* db) const { sqlite3_close(db); }
  };
  Archive(std::string path, sqlite3* db) : path_(std::move(path)), db_(db) {}
  Status exec(const char* sql) const;
  Error sqlite_error(const std::string& what) const;

  std::string path_;
  std::unique_ptr<sqlite3, Closer> db_;
};

}  // namespace drk::archivist
