#include "tools/observe/run_records.h"

#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <sstream>

#include "actors/archivist/archive.h"

namespace drk::observe {
namespace {

// The candidates recorded after a rowid, with their result, verdict and whether they were screened;
// `phases` are the columns of the evaluation's phases, or zeros for an archive without them.
std::string candidates_query(const std::string& phases) {
  return "SELECT c.rowid, c.id, c.task, c.device, c.language, c.step, c.recorded_ms, "
         "COALESCE(r.evaluator, ''), COALESCE(r.compiled, 0), COALESCE(r.compile_cached, 0), "
         "COALESCE(r.correct, 0), COALESCE(r.speedup, 0), COALESCE(r.eval_ms, 0), " +
         phases +
         ", COALESCE(v.honest, 1), COALESCE(v.failed_checks, ''), s.candidate_id IS NOT NULL "
         "FROM candidates c LEFT JOIN results r ON r.candidate_id = c.id "
         "LEFT JOIN verdicts v ON v.candidate_id = c.id LEFT JOIN screened s ON s.candidate_id = c.id "
         "WHERE c.rowid > ? ORDER BY c.rowid";
}

std::vector<std::string> split_checks(const std::string& text) {
  std::vector<std::string> checks;
  std::stringstream stream(text);
  for (std::string check; std::getline(stream, check, ',');)
    if (!check.empty()) checks.push_back(check);
  return checks;
}

}  // namespace

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::correct: return "correct";
    case Outcome::hacked: return "hacked";
    case Outcome::failed: return "failed";
    case Outcome::screened: return "screened";
  }
  return "failed";
}

Outcome EvaluationRecord::outcome() const {
  if (screened) return Outcome::screened;
  if (!honest) return Outcome::hacked;
  return correct ? Outcome::correct : Outcome::failed;
}

RunRecords::RunRecords(std::string run_dir) : run_dir_(std::move(run_dir)) {}
RunRecords::~RunRecords() = default;

void RunRecords::read_topology() {
  try {
    const YAML::Node topology = YAML::LoadFile(run_dir_ + "/topology.yaml");
    const YAML::Node experiment = topology["experiment"];
    if (!experiment || !experiment.IsMap()) {
      read_topology_ = true;
      return;
    }
    if (const YAML::Node tasks = experiment["tasks"]; tasks && tasks.IsSequence())
      for (const auto& task : tasks)
        if (task.IsScalar()) experiment_tasks_.push_back(task.Scalar());
    if (const YAML::Node steps = experiment["steps"]; steps && steps.IsScalar()) planned_steps_ = steps.as<uint32_t>();
    read_topology_ = true;
  } catch (const YAML::Exception&) {
    // No topology yet (or one being written): read again at the next refresh.
    experiment_tasks_.clear();
  }
}

bool RunRecords::open_if_present() {
  if (archive_) return true;
  const std::string path = archivist::Archive::default_path(run_dir_);
  if (!std::filesystem::exists(path)) return false;
  auto opened = archivist::Archive::open(path, /*read_only=*/true);
  if (!opened) return false;
  archive_.emplace(std::move(*opened));
  return true;
}

Status RunRecords::refresh() {
  if (!read_topology_) read_topology();
  if (!open_if_present()) return {};
  if (auto read = read_candidates(); !read) return read;
  return read_steps();
}

Status RunRecords::read_candidates() {
  auto with_phases = archive_->query(candidates_query("COALESCE(r.compile_wait_ms, 0), COALESCE(r.load_ms, 0), "
                                                     "COALESCE(r.correctness_ms, 0), COALESCE(r.timing_ms, 0)")
                                        .c_str());
  auto without_phases = archive_->query(candidates_query("0, 0, 0, 0").c_str());
  auto& query = with_phases.prepared() ? with_phases : without_phases;
  // No candidates table yet: the Archivist is creating the schema.
  if (!query.prepared()) return {};
  query.integer(last_candidate_rowid_);
  int status;
  while ((status = query.step()) == SQLITE_ROW) {
    EvaluationRecord record;
    last_candidate_rowid_ = query.column_integer(0);
    record.candidate_id = query.column_text(1);
    record.task = query.column_text(2);
    record.device = query.column_text(3);
    record.language = query.column_text(4);
    record.step = static_cast<uint32_t>(query.column_integer(5));
    record.recorded_unix_ms = query.column_integer(6);
    record.evaluator = query.column_text(7);
    record.compiled = query.column_integer(8) != 0;
    record.compile_cached = query.column_integer(9) != 0;
    record.correct = query.column_integer(10) != 0;
    record.speedup = query.column_real(11);
    record.eval_ms = query.column_real(12);
    record.compile_wait_ms = query.column_real(13);
    record.load_ms = query.column_real(14);
    record.correctness_ms = query.column_real(15);
    record.timing_ms = query.column_real(16);
    record.honest = query.column_integer(17) != 0;
    record.failed_checks = split_checks(query.column_text(18));
    record.screened = query.column_integer(19) != 0;
    evaluations_[record.candidate_id] = std::move(record);
  }
  if (status != SQLITE_DONE && status != SQLITE_BUSY)
    return make_error(Errc::io_error, "archive of '" + run_dir_ + "': " + query.error());
  return {};
}

Status RunRecords::read_steps() {
  auto query = archive_->query(
      "SELECT step, mean_reward, best_speedup, correct_fraction, seconds, finished FROM steps "
      "WHERE step >= ? ORDER BY step");
  if (!query.prepared()) return {};
  // The last step read is read again: a step recorded twice (after a restart) replaces itself.
  const uint32_t from = steps_.empty() ? 0 : steps_.back().step;
  query.integer(from);
  while (!steps_.empty() && steps_.back().step >= from) steps_.pop_back();
  int status;
  while ((status = query.step()) == SQLITE_ROW) {
    steps_.push_back({static_cast<uint32_t>(query.column_integer(0)), query.column_real(1), query.column_real(2),
                      query.column_real(3), query.column_real(4), query.column_integer(5) != 0});
  }
  if (status != SQLITE_DONE && status != SQLITE_BUSY)
    return make_error(Errc::io_error, "archive of '" + run_dir_ + "': " + query.error());
  return {};
}

OutcomeCounts count_outcomes(const RunRecords& records) {
  OutcomeCounts counts;
  for (Outcome outcome : {Outcome::correct, Outcome::hacked, Outcome::failed, Outcome::screened})
    counts.outcomes[outcome] = 0;
  for (const auto& [id, record] : records.evaluations()) {
    ++counts.outcomes[record.outcome()];
    for (const auto& check : record.failed_checks) ++counts.failed_checks[check];
    if (record.screened) continue;
    ++(record.compile_cached ? counts.compile_cache_hits : counts.compile_cache_misses);
  }
  return counts;
}

std::string RunRecords::source_of(const std::string& candidate_id) {
  if (auto known = sources_.find(candidate_id); known != sources_.end()) return known->second;
  if (!archive_) return "";
  auto source = archive_->source_of(candidate_id);
  if (!source) return "";
  return sources_[candidate_id] = *source;
}

}  // namespace drk::observe
