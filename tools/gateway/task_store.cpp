#include "tools/gateway/task_store.h"

#include "base/sqlite_statement.h"

namespace drk::gateway {
namespace {

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS tasks ("
    " sequence INTEGER PRIMARY KEY AUTOINCREMENT,"
    " id TEXT NOT NULL UNIQUE,"
    " priority INTEGER NOT NULL,"
    " state INTEGER NOT NULL,"
    " request TEXT NOT NULL,"
    " result TEXT NOT NULL DEFAULT '',"
    " submitted_ms INTEGER NOT NULL,"
    " finished_ms INTEGER NOT NULL DEFAULT 0);";

constexpr const char* kColumns = "id, sequence, priority, state, request, result, submitted_ms, finished_ms";

StoredTask task_of(const SqliteStatement& row) {
  StoredTask task;
  task.id = row.column_text(0);
  task.sequence = row.column_integer(1);
  task.priority = static_cast<int>(row.column_integer(2));
  task.state = static_cast<TaskState>(row.column_integer(3));
  task.request = row.column_text(4);
  task.result = row.column_text(5);
  task.submitted_ms = row.column_integer(6);
  task.finished_ms = row.column_integer(7);
  return task;
}

}  // namespace

std::string task_state_name(TaskState state) {
  switch (state) {
    case TaskState::queued: return "queued";
    case TaskState::running: return "running";
    case TaskState::completed: return "completed";
    case TaskState::failed: return "failed";
    case TaskState::cancelled: return "cancelled";
  }
  return "unknown";
}

Result<std::unique_ptr<TaskStore>> TaskStore::open(const std::string& path) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    return make_error(Errc::io_error, "the gateway's task store '" + path + "' cannot be opened: " + message);
  }
  std::unique_ptr<TaskStore> store(new TaskStore(db, path));
  sqlite3_busy_timeout(db, 5000);
  // WAL with synchronous=FULL: a task is on disk before its submission is answered.
  if (auto made = store->exec(std::string("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; ") + kSchema); !made)
    return made.error();
  return store;
}

TaskStore::~TaskStore() { sqlite3_close(db_); }

Status TaskStore::exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &message) == SQLITE_OK) return {};
  std::string text = message ? message : "unknown error";
  sqlite3_free(message);
  return make_error(Errc::io_error, "the gateway's task store '" + path_ + "': " + text);
}

Error TaskStore::failure(const std::string& what) const {
  return make_error(Errc::io_error, "the gateway's task store '" + path_ + "' cannot " + what + ": " + sqlite3_errmsg(db_));
}

Result<bool> TaskStore::insert(const std::string& id, int priority, const std::string& request, int64_t submitted_ms) {
  std::lock_guard lock(mutex_);
  SqliteStatement insert(db_,
                   "INSERT OR IGNORE INTO tasks (id, priority, state, request, submitted_ms) VALUES (?, ?, 0, ?, ?)");
  if (!insert.prepared()) return failure("record a task");
  insert.text(id).integer(priority).text(request).integer(submitted_ms);
  if (insert.step() != SQLITE_DONE) return failure("record task " + id);
  return sqlite3_changes(db_) == 1;
}

Result<std::optional<StoredTask>> TaskStore::find(const std::string& id) {
  std::lock_guard lock(mutex_);
  SqliteStatement select(db_, (std::string("SELECT ") + kColumns + " FROM tasks WHERE id = ?").c_str());
  if (!select.prepared()) return failure("read a task");
  select.text(id);
  const int step = select.step();
  if (step == SQLITE_DONE) return std::optional<StoredTask>();
  if (step != SQLITE_ROW) return failure("read task " + id);
  return std::optional<StoredTask>(task_of(select));
}

Status TaskStore::set_state(const std::string& id, TaskState state) {
  std::lock_guard lock(mutex_);
  SqliteStatement update(db_, "UPDATE tasks SET state = ? WHERE id = ?");
  if (!update.prepared()) return failure("update a task");
  update.integer(static_cast<int64_t>(state)).text(id);
  if (update.step() != SQLITE_DONE) return failure("update task " + id);
  return {};
}

Status TaskStore::finish(const std::string& id, TaskState state, const std::string& result, int64_t finished_ms) {
  std::lock_guard lock(mutex_);
  SqliteStatement update(db_, "UPDATE tasks SET state = ?, result = ?, finished_ms = ? WHERE id = ?");
  if (!update.prepared()) return failure("record a result");
  update.integer(static_cast<int64_t>(state)).text(result).integer(finished_ms).text(id);
  if (update.step() != SQLITE_DONE) return failure("record the result of task " + id);
  return {};
}

Result<std::vector<StoredTask>> TaskStore::queued_or_running() {
  std::lock_guard lock(mutex_);
  SqliteStatement select(db_, (std::string("SELECT ") + kColumns +
                         " FROM tasks WHERE state IN (0, 1) ORDER BY priority DESC, sequence ASC")
                            .c_str());
  if (!select.prepared()) return failure("list the unfinished tasks");
  std::vector<StoredTask> tasks;
  int step;
  while ((step = select.step()) == SQLITE_ROW) tasks.push_back(task_of(select));
  if (step != SQLITE_DONE) return failure("list the unfinished tasks");
  return tasks;
}

Result<std::map<TaskState, int64_t>> TaskStore::counts() {
  std::lock_guard lock(mutex_);
  SqliteStatement select(db_, "SELECT state, COUNT(*) FROM tasks GROUP BY state");
  if (!select.prepared()) return failure("count tasks");
  std::map<TaskState, int64_t> counts;
  int step;
  while ((step = select.step()) == SQLITE_ROW)
    counts[static_cast<TaskState>(select.column_integer(0))] = select.column_integer(1);
  if (step != SQLITE_DONE) return failure("count tasks");
  return counts;
}

}  // namespace drk::gateway
