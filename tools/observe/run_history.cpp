#include "tools/observe/run_history.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "actors/archivist/archive.h"

namespace drk::observe {
namespace {

namespace fs = std::filesystem;

// One candidate as the report needs it.
struct Outcome {
  std::string id, task, checks, feedback, source;
  uint32_t step = 0;  // from 0, as recorded
  bool measured = false, correct = false, honest = true, screened = false;
  double speedup = 0;
  uint32_t trials = 0, trials_passed = 0;
};

Error read_error(const archivist::Archive& archive, const std::string& what, const std::string& message) {
  return make_error(Errc::io_error, "archive '" + archive.path() + "': cannot read " + what + ": " + message +
                                        " (is it a run's archive.sqlite, written by this drk?)");
}

// Rows of `sql`, each passed to `each`; an archive of an older run may lack a table, which
// reads as no rows.
template <typename Each>
Status for_each_row(const archivist::Archive& archive, const char* sql, const std::string& what, Each each) {
  auto rows = archive.query(sql);
  if (!rows.prepared()) {
    if (rows.error().starts_with("no such table")) return {};
    return read_error(archive, what, rows.error());
  }
  int status;
  while ((status = rows.step()) == SQLITE_ROW) each(rows);
  if (status != SQLITE_DONE) return read_error(archive, what, rows.error());
  return {};
}

Result<std::vector<Outcome>> read_outcomes(const archivist::Archive& archive) {
  std::vector<Outcome> outcomes;
  constexpr const char* kSql = R"sql(
    SELECT c.id, c.step, c.task, r.candidate_id IS NOT NULL, COALESCE(r.correct, 0), COALESCE(r.speedup, 0),
           COALESCE(v.honest, 1), COALESCE(v.failed_checks, ''), COALESCE(f.summary, ''),
           COALESCE(r.trials, 0), COALESCE(r.trials_passed, 0), c.source,
           EXISTS (SELECT 1 FROM screened s WHERE s.candidate_id = c.id)
    FROM candidates c
    LEFT JOIN results r ON r.candidate_id = c.id
    LEFT JOIN verdicts v ON v.candidate_id = c.id
    LEFT JOIN feedback f ON f.candidate_id = c.id
    ORDER BY c.step, c.id)sql";
  auto read = for_each_row(archive, kSql, "the candidates", [&](const SqliteStatement& row) {
    Outcome outcome;
    outcome.id = row.column_text(0);
    outcome.step = static_cast<uint32_t>(row.column_integer(1));
    outcome.task = row.column_text(2);
    outcome.measured = row.column_integer(3) != 0;
    outcome.correct = row.column_integer(4) != 0;
    outcome.speedup = row.column_real(5);
    outcome.honest = row.column_integer(6) != 0;
    outcome.checks = row.column_text(7);
    outcome.feedback = row.column_text(8);
    outcome.trials = static_cast<uint32_t>(row.column_integer(9));
    outcome.trials_passed = static_cast<uint32_t>(row.column_integer(10));
    outcome.source = row.column_text(11);
    outcome.screened = row.column_integer(12) != 0;
    outcomes.push_back(std::move(outcome));
  });
  if (!read) return read.error();
  return outcomes;
}

// The mean coverage of each step's measured verified turns, by step from 0.
Result<std::map<uint32_t, double>> read_coverage(const archivist::Archive& archive) {
  std::map<uint32_t, double> coverage;
  constexpr const char* kSql = R"sql(
    SELECT s.step, AVG(s.coverage) FROM samples s
    WHERE s.correct AND s.honest AND NOT EXISTS (SELECT 1 FROM screened x WHERE x.candidate_id = s.candidate_id)
    GROUP BY s.step)sql";
  auto read = for_each_row(archive, kSql, "the training samples", [&](const SqliteStatement& row) {
    coverage[static_cast<uint32_t>(row.column_integer(0))] = row.column_real(1);
  });
  if (!read) return read.error();
  return coverage;
}

bool verified(const Outcome& outcome) {
  return outcome.measured && outcome.correct && outcome.honest && !outcome.screened;
}

std::vector<std::string> split_checks(const std::string& checks) {
  std::vector<std::string> codes;
  std::stringstream stream(checks);
  for (std::string code; std::getline(stream, code, ',');)
    if (!code.empty()) codes.push_back(code);
  if (codes.empty()) codes.push_back("(no check named)");
  return codes;
}

void read_configuration(RunHistory& history) {
  const std::string path = history.run_dir + "/topology.yaml";
  history.estimator = "trloo";  // the Learner's default (actors/learner/learner_settings.cpp)
  std::ifstream file(path);
  if (!file) {
    history.missing.push_back(path + " is missing: the configuration is not shown (`drk run` writes it when the run "
                              "starts; is this a run directory?)");
    return;
  }
  std::stringstream text;
  text << file.rdbuf();
  history.topology_yaml = text.str();
  try {
    const YAML::Node estimator = YAML::Load(history.topology_yaml)["experiment"]["estimator"];
    if (estimator && estimator.IsScalar()) history.estimator = estimator.as<std::string>();
  } catch (const YAML::Exception& e) {
    history.missing.push_back(path + " does not parse (" + e.msg + "): the estimator is assumed to be trloo");
  }
}

void add_steps(RunHistory& history, const std::vector<archivist::StepRow>& rows, const std::vector<Outcome>& outcomes,
               const std::map<uint32_t, double>& coverage) {
  std::set<std::string> tasks;
  for (const auto& outcome : outcomes) tasks.insert(outcome.task);
  std::map<std::string, double> best_so_far;
  auto next = outcomes.begin();  // outcomes are ordered by step
  for (const auto& row : rows) {
    for (; next != outcomes.end() && next->step <= row.step; ++next)
      if (verified(*next)) best_so_far[next->task] = std::max(best_so_far[next->task], next->speedup);
    StepPoint point;
    point.step = row.step + 1;
    point.mean_reward = row.mean_reward;
    point.best_speedup = row.best_speedup;
    point.correct_fraction = row.correct_fraction;
    point.measured = row.measured;
    point.screened = row.screened;
    point.rolled_back = row.rolled_back;
    if (auto found = coverage.find(row.step); found != coverage.end()) point.coverage = found->second;
    for (size_t i = 0; i < kFastP.size(); ++i) {
      size_t fast = 0;
      for (const auto& [task, speedup] : best_so_far) fast += speedup > kFastP[i] ? 1 : 0;
      point.fast_p[i] = tasks.empty() ? 0 : static_cast<double>(fast) / static_cast<double>(tasks.size());
    }
    history.steps.push_back(point);
  }
}

Status add_tasks(RunHistory& history, const archivist::Archive& archive, const std::vector<Outcome>& outcomes) {
  auto best = archive.best_per_task();
  if (!best) return best.error();
  auto remeasured = archive.remeasured();
  if (!remeasured) return remeasured.error();
  std::map<std::string, TaskBest> tasks;
  std::map<std::string, const Outcome*> by_id;
  for (const auto& outcome : outcomes) {
    TaskBest& task = tasks[outcome.task];
    task.task = outcome.task;
    ++task.candidates;
    task.verified += verified(outcome) ? 1 : 0;
    task.hacked += outcome.measured && !outcome.honest ? 1 : 0;
    by_id[outcome.id] = &outcome;
  }
  std::vector<TaskBest> rows;
  std::set<std::string> with_kernel;
  for (const auto& kernel : *best) {
    TaskBest task = tasks[kernel.task];
    task.task = kernel.task;
    task.candidate_id = kernel.candidate_id;
    task.judged_on = archivist::judged_on(kernel);
    task.speedup = kernel.speedup;
    task.candidate_us = kernel.candidate_us;
    task.reference_us = kernel.reference_us;
    task.policy_version = kernel.policy_version;
    if (auto found = by_id.find(kernel.candidate_id); found != by_id.end()) {
      task.step = found->second->step + 1;
      task.trials = found->second->trials;
      task.trials_passed = found->second->trials_passed;
      task.source = found->second->source;
    }
    for (const auto& row : *remeasured) {
      if (row.task != task.task || row.candidate_id != task.candidate_id) continue;
      task.remeasured_speedup = row.speedup;
      task.remeasured_correct = row.evaluations;
    }
    with_kernel.insert(kernel.task);
    rows.push_back(std::move(task));
  }
  for (auto& [name, task] : tasks)
    if (!with_kernel.count(name)) rows.push_back(std::move(task));
  std::stable_sort(rows.begin(), rows.end(), [](const TaskBest& a, const TaskBest& b) { return a.task < b.task; });
  for (auto& task : rows) history.tasks.push_back(std::move(task));
  return {};
}

void add_caught(RunHistory& history, const std::vector<Outcome>& outcomes) {
  std::map<std::string, CaughtCheck> by_check;
  for (const auto& outcome : outcomes) {
    if (!outcome.measured || outcome.honest) continue;
    ++history.hacked;
    for (const auto& code : split_checks(outcome.checks)) {
      CaughtCheck& caught = by_check[code];
      if (caught.candidates++ > 0) continue;
      caught.check = code;
      caught.example_id = outcome.id;
      caught.example_task = outcome.task;
      caught.example_feedback = outcome.feedback;
      caught.example_source = outcome.source;
    }
  }
  for (auto& [code, caught] : by_check) history.caught.push_back(std::move(caught));
  std::stable_sort(history.caught.begin(), history.caught.end(),
                   [](const CaughtCheck& a, const CaughtCheck& b) { return a.candidates > b.candidates; });
}

}  // namespace

Result<RunHistory> read_run_history(const std::string& run_dir) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec))
    return make_error(Errc::not_found, "'" + run_dir + "' is not a folder: pass a run directory (the run_dir of "
                                           "`drk run`, e.g. runs/quickstart)");
  RunHistory history;
  history.run_dir = run_dir;
  // "runs/quickstart/" and "." name their folder too.
  const fs::path folder = fs::absolute(run_dir, ec).lexically_normal();
  history.name = folder.has_filename() ? folder.filename().string() : folder.parent_path().filename().string();
  read_configuration(history);
  history.label = history.name + " (" + history.estimator + ")";

  const std::string path = archivist::Archive::default_path(run_dir);
  if (!fs::exists(path, ec)) {
    history.missing.push_back(path + " does not exist: no candidate, step or kernel is shown (the Archivist "
                              "creates it when the run starts; a run made with an older drk keeps it elsewhere)");
    return history;
  }
  auto archive = archivist::Archive::open(path, /*read_only=*/true);
  if (!archive) return archive.error();
  auto outcomes = read_outcomes(*archive);
  if (!outcomes) return outcomes.error();
  auto coverage = read_coverage(*archive);
  if (!coverage) return coverage.error();
  auto rows = archive->steps();
  if (!rows) return rows.error();
  history.candidates = static_cast<uint32_t>(outcomes->size());
  for (const auto& outcome : *outcomes) history.screened += outcome.screened ? 1 : 0;
  add_steps(history, *rows, *outcomes, *coverage);
  if (auto added = add_tasks(history, *archive, *outcomes); !added) return added.error();
  add_caught(history, *outcomes);
  auto tallies = archive->tallies();
  if (!tallies) return tallies.error();
  history.other_shapes = archivist::other_shapes(*tallies);
  if (history.steps.empty())
    history.missing.push_back(path + " holds no step yet: the curves are empty (the first step is recorded when it "
                              "ends; report again later)");
  if (outcomes->empty()) history.missing.push_back(path + " holds no candidate yet: no kernel and no hack to show");
  return history;
}

}  // namespace drk::observe
