// TaskStore: the gateway's durable record of every task it accepted (SQLite, one file in the
// gateway's state directory): the request, its state, and its result once finished. A task is
// written before its submission is answered, so a gateway that dies loses no accepted task: the
// next one re-queues every task still queued or running (queued_or_running()).
//
// Thread-safety: every member may be called from any thread (one connection behind a mutex).
// Ownership: the store owns its connection. Errors: io_error naming the file and SQLite's message.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

struct sqlite3;

namespace drk::gateway {

enum class TaskState { queued, running, completed, failed, cancelled };

std::string task_state_name(TaskState state);

struct StoredTask {
  std::string id;
  int64_t sequence = 0;  // the order of acceptance
  int priority = 0;
  TaskState state = TaskState::queued;
  std::string request;  // evaluate_request_json() as text
  std::string result;   // the result's JSON text; empty until finished
  int64_t submitted_ms = 0;  // Unix time
  int64_t finished_ms = 0;
};

class TaskStore {
 public:
  static Result<std::unique_ptr<TaskStore>> open(const std::string& path);
  ~TaskStore();
  TaskStore(const TaskStore&) = delete;
  TaskStore& operator=(const TaskStore&) = delete;

  // Records a new queued task; false (and nothing written) when `id` is already recorded.
  Result<bool> insert(const std::string& id, int priority, const std::string& request, int64_t submitted_ms);
  Result<std::optional<StoredTask>> find(const std::string& id);
  Status set_state(const std::string& id, TaskState state);
  Status finish(const std::string& id, TaskState state, const std::string& result, int64_t finished_ms);
  // Tasks queued or running when the last gateway stopped: highest priority first, then oldest.
  Result<std::vector<StoredTask>> queued_or_running();
  Result<std::map<TaskState, int64_t>> counts();

 private:
  TaskStore(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  Status exec(const std::string& sql);
  Error failure(const std::string& what) const;

  std::mutex mutex_;
  sqlite3* db_;
  std::string path_;
};

}  // namespace drk::gateway
