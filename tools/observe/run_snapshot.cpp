#include "tools/observe/run_snapshot.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "tools/observe/evaluator_usage.h"

namespace drk::observe {
namespace {

// The JSON keys of kFastPThresholds, as KernelBench writes p.
constexpr const char* kFastPKeys[] = {"0", "1.0", "1.2", "1.5", "2.0"};

bool verified(const EvaluationRecord& record) { return record.outcome() == Outcome::correct; }

// The run's tasks: experiment.tasks in order, then any other task recorded, by name.
std::vector<std::string> run_tasks(const RunRecords& records) {
  std::vector<std::string> tasks = records.experiment_tasks();
  std::set<std::string> known(tasks.begin(), tasks.end());
  std::set<std::string> recorded;
  for (const auto& [id, record] : records.evaluations())
    if (!known.contains(record.task)) recorded.insert(record.task);
  tasks.insert(tasks.end(), recorded.begin(), recorded.end());
  return tasks;
}

Json fast_p(const std::map<std::string, double>& best_by_task, size_t task_count) {
  Json shares = Json::object();
  for (size_t at = 0; at < std::size(kFastPThresholds); ++at) {
    size_t faster = 0;
    for (const auto& [task, speedup] : best_by_task)
      if (kFastPThresholds[at] == 0.0 || speedup > kFastPThresholds[at]) ++faster;
    shares[kFastPKeys[at]] = task_count > 0 ? static_cast<double>(faster) / static_cast<double>(task_count) : 0.0;
  }
  return shares;
}

Json steps_json(const RunRecords& records, size_t task_count) {
  // Verified evaluations by step, so that each step's Fast@p adds its own to the ones before.
  std::multimap<uint32_t, const EvaluationRecord*> by_step;
  for (const auto& [id, record] : records.evaluations())
    if (verified(record)) by_step.emplace(record.step, &record);
  std::map<std::string, double> best_by_task;
  auto next = by_step.begin();
  Json steps = Json::array();
  for (const StepRecord& step : records.steps()) {
    for (; next != by_step.end() && next->first <= step.step; ++next) {
      double& best = best_by_task[next->second->task];
      best = std::max(best, next->second->speedup);
    }
    steps.push_back({{"step", step.step},
                     {"mean_reward", step.mean_reward},
                     {"best_speedup", step.best_speedup},
                     {"correct_fraction", step.correct_fraction},
                     {"seconds", step.seconds},
                     {"fast_p", fast_p(best_by_task, task_count)}});
  }
  return steps;
}

Json tasks_json(RunRecords& records, const std::vector<std::string>& tasks) {
  struct Shown {
    const EvaluationRecord* best = nullptr;    // fastest verified
    const EvaluationRecord* newest = nullptr;  // newest evaluated (not screened)
    uint64_t candidates = 0;
    uint64_t verified = 0;
  };
  std::map<std::string, Shown> shown;
  for (const auto& [id, record] : records.evaluations()) {
    Shown& task = shown[record.task];
    ++task.candidates;
    if (verified(record)) {
      ++task.verified;
      if (!task.best || record.speedup > task.best->speedup) task.best = &record;
    }
    if (!record.screened && (!task.newest || record.recorded_unix_ms >= task.newest->recorded_unix_ms))
      task.newest = &record;
  }
  Json rows = Json::array();
  for (const std::string& name : tasks) {
    const Shown& task = shown[name];
    const EvaluationRecord* record = task.best ? task.best : task.newest;
    Json row = {{"task", name},
                {"best_speedup", task.best ? task.best->speedup : 0.0},
                {"candidate_id", record ? record->candidate_id : ""},
                {"language", record ? record->language : ""},
                {"verdict", record ? outcome_name(record->outcome()) : "none"},
                {"failed_checks", record ? record->failed_checks : std::vector<std::string>{}},
                {"source", record ? records.source_of(record->candidate_id) : ""},
                {"candidates", task.candidates},
                {"verified", task.verified}};
    rows.push_back(std::move(row));
  }
  return rows;
}

Json outcomes_json(const OutcomeCounts& counts) {
  Json outcomes = Json::object();
  for (const auto& [outcome, count] : counts.outcomes) outcomes[outcome_name(outcome)] = count;
  return outcomes;
}

Json reasons_json(const OutcomeCounts& counts) {
  std::vector<std::pair<std::string, uint64_t>> by_count(counts.failed_checks.begin(), counts.failed_checks.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  Json reasons = Json::array();
  for (const auto& [check, count] : by_count) reasons.push_back({{"check", check}, {"count", count}});
  return reasons;
}

Json evaluators_json(const RunRecords& records) {
  Json rows = Json::array();
  for (const EvaluatorUsage& usage : evaluator_usage(records)) {
    rows.push_back({{"name", usage.name},
                    {"evaluations", usage.evaluations},
                    {"utilisation", usage.utilisation},
                    {"gpu_busy_fraction", usage.gpu_busy_fraction},
                    {"device_busy_fraction", usage.device_busy_fraction},
                    {"device", usage.device}});
  }
  return rows;
}

Json actors_json(const runtime::SystemView& system) {
  Json rows = Json::array();
  for (const runtime::ActorView& actor : system.actors) {
    rows.push_back({{"name", actor.name},
                    {"role", actor.role},
                    {"process", actor.process},
                    {"state", runtime::status_name(actor.status)},
                    {"mailbox_depth", actor.mailbox_depth},
                    {"mailbox_capacity", actor.mailbox_capacity},
                    {"messages_per_second", actor.messages_per_second},
                    {"dead_letters", actor.dead_letters},
                    {"messages_handled", actor.messages_handled},
                    {"current_handler", actor.current_handler},
                    {"recent_dead_letters", actor.recent_dead_letters}});
  }
  return rows;
}

Json processes_json(const runtime::SystemView& system) {
  Json rows = Json::array();
  for (const runtime::ProcessView& process : system.processes) {
    rows.push_back({{"name", process.name},
                    {"pid", process.pid},
                    {"status", runtime::status_name(process.status)},
                    {"restarts", process.restarts},
                    {"last_cause", process.recent_causes.empty() ? "" : process.recent_causes.back()},
                    {"causes", process.recent_causes}});
  }
  return rows;
}

Json nodes_json(const runtime::SystemView& system) {
  Json rows = Json::array();
  for (const runtime::NodeView& node : system.nodes) {
    rows.push_back({{"name", node.name},
                    {"state", runtime::status_name(node.status)},
                    {"last_heartbeat_age_seconds", node.last_heartbeat_age_seconds},
                    {"address", node.address},
                    {"losses", node.losses},
                    {"last_loss_cause", node.last_loss_cause}});
  }
  return rows;
}

}  // namespace

Json snapshot_steps(const RunRecords& records) { return steps_json(records, run_tasks(records).size()); }

Json run_snapshot(RunRecords& records, const runtime::SystemView& system, int64_t now_unix_ms) {
  const std::vector<std::string> tasks = run_tasks(records);
  const OutcomeCounts counts = count_outcomes(records);
  Json snapshot;
  snapshot["run"] = {{"topology", system.topology},
                     {"run_dir", records.run_dir()},
                     {"now_unix_ms", now_unix_ms},
                     {"finished", !records.steps().empty() && records.steps().back().finished},
                     {"steps_planned", records.planned_steps()},
                     {"training", system.training}};
  snapshot["steps"] = steps_json(records, tasks.size());
  snapshot["outcomes"] = outcomes_json(counts);
  snapshot["verifier_reasons"] = reasons_json(counts);
  snapshot["tasks"] = tasks_json(records, tasks);
  snapshot["evaluators"] = evaluators_json(records);
  snapshot["compile_cache"] = {{"hits", counts.compile_cache_hits}, {"misses", counts.compile_cache_misses}};
  snapshot["actors"] = actors_json(system);
  snapshot["processes"] = processes_json(system);
  snapshot["nodes"] = nodes_json(system);
  return snapshot;
}

}  // namespace drk::observe
