#include "tools/gateway/gateway.h"

#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

#include "runtime/metrics/prometheus_text.h"
#include "tools/gateway/task_store.h"

namespace drk::gateway {
namespace {

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Answer error_answer(unsigned status, const std::string& message) {
  return Answer{status, Json{{"error", message}, {"detail", message}}, std::nullopt};
}

// Highest priority first, then the oldest.
using QueueKey = std::tuple<int, int64_t, std::string>;  // (-priority, sequence, id)

struct Worker {
  std::string state = "starting";  // starting, idle, busy, failed: REASON
  std::string task_id;
  int64_t evaluated = 0;
};

}  // namespace

struct Gateway::State {
  GatewayOptions options;
  TaskEvaluatorFactory evaluators;
  std::unique_ptr<TaskStore> store;

  std::mutex mutex;
  std::condition_variable work;
  std::set<QueueKey> queue;
  std::map<std::string, QueueKey> queued;  // id -> its key
  bool stopping = false;
  std::vector<Worker> workers;
  std::vector<std::weak_ptr<runtime::http::EventStream>> streams;
  int64_t submitted = 0;
  int64_t rejected_full = 0;
  std::map<std::string, int64_t> finished;  // by status
  // From a cached failure (milliseconds) to a long timing (minutes).
  runtime::metrics::Histogram evaluation_seconds{{0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}};
  std::mt19937_64 ids{std::random_device{}()};
  std::vector<std::thread> threads;

  std::string new_id() {
    char text[32];
    std::snprintf(text, sizeof text, "drk-%016llx", static_cast<unsigned long long>(ids()));
    return text;
  }

  // Under `mutex`: records and queues `request`; false when the id is known already.
  Result<bool> accept(const EvaluateRequest& request) {
    auto inserted = store->insert(request.task_id, request.priority, json_text(evaluate_request_json(request)), unix_ms());
    if (!inserted || !*inserted) return inserted;
    auto task = store->find(request.task_id);
    if (!task || !*task) return make_error(Errc::internal, "task " + request.task_id + " vanished from the store");
    enqueue(**task);
    ++submitted;
    return true;
  }

  void enqueue(const StoredTask& task) {
    QueueKey key{-task.priority, task.sequence, task.id};
    queue.insert(key);
    queued[task.id] = key;
    work.notify_one();
  }

  Answer refused_full(size_t wanted) {
    ++rejected_full;
    Answer answer = error_answer(429, "the queue is full (" + std::to_string(queue.size()) + " of " +
                                          std::to_string(options.queue_capacity) + " tasks queued; " +
                                          std::to_string(wanted) + " more asked): retry after " +
                                          std::to_string(options.retry_after.count()) + " s");
    answer.retry_after = options.retry_after;
    return answer;
  }

  void publish(const std::string& result) {
    std::lock_guard lock(mutex);
    std::erase_if(streams, [&](const auto& weak) {
      auto stream = weak.lock();
      if (!stream || stream->closed()) return true;
      stream->publish("result", result);
      return false;
    });
  }

  void run_worker(size_t index) {
    auto evaluator = evaluators(index);
    std::unique_lock lock(mutex);
    if (!evaluator) {
      workers[index].state = "failed: " + evaluator.error().message;
      return;
    }
    while (true) {
      workers[index].state = "idle";
      workers[index].task_id.clear();
      work.wait(lock, [&] { return stopping || !queue.empty(); });
      if (stopping) return;
      const std::string id = std::get<2>(*queue.begin());
      queue.erase(queue.begin());
      queued.erase(id);
      workers[index].state = "busy";
      workers[index].task_id = id;
      lock.unlock();
      evaluate(**evaluator, id);
      lock.lock();
      ++workers[index].evaluated;
    }
  }

  void evaluate(TaskEvaluator& evaluator, const std::string& id) {
    const auto start = std::chrono::steady_clock::now();
    (void)store->set_state(id, TaskState::running);
    auto task = store->find(id);
    Json result;
    if (!task || !*task) {
      return;  // the store cannot be read: the task stays recorded as queued for the next gateway
    }
    auto request = parse_evaluate_request(Json::parse((*task)->request, nullptr, false), id);
    if (!request) {
      result = Json{{"task_id", id}, {"status", "failed"}, {"error_code", "internal_error"},
                    {"error_message", request.error().message}};
    } else {
      result = evaluator.evaluate(*request);
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result["processing_time"] = seconds;
    const std::string status = result.value("status", std::string("failed"));
    const std::string text = json_text(result);
    (void)store->finish(id, status == "completed" ? TaskState::completed : TaskState::failed, text, unix_ms());
    {
      std::lock_guard lock(mutex);
      ++finished[status];
      evaluation_seconds.observe(seconds);
    }
    publish(text);
  }
};

Result<std::unique_ptr<Gateway>> Gateway::open(const GatewayOptions& options, TaskEvaluatorFactory evaluators) {
  std::error_code error;
  std::filesystem::create_directories(options.state_dir, error);
  if (error)
    return make_error(Errc::io_error, "the gateway's state directory '" + options.state_dir +
                                          "' cannot be made: " + error.message());
  auto state = std::make_unique<State>();
  state->options = options;
  state->evaluators = std::move(evaluators);
  auto store = TaskStore::open(options.state_dir + "/gateway.sqlite");
  if (!store) return store.error();
  state->store = std::move(*store);
  // What the last gateway accepted and did not finish: queued again, beyond the capacity if need be.
  auto unfinished = state->store->queued_or_running();
  if (!unfinished) return unfinished.error();
  for (const auto& task : *unfinished) {
    if (auto requeued = state->store->set_state(task.id, TaskState::queued); !requeued) return requeued.error();
    state->enqueue(task);
  }
  state->workers.resize(options.workers);
  for (size_t i = 0; i < options.workers; ++i) state->threads.emplace_back([s = state.get(), i] { s->run_worker(i); });
  return std::unique_ptr<Gateway>(new Gateway(std::move(state)));
}

Gateway::Gateway(std::unique_ptr<State> state) : state_(std::move(state)) {}

Gateway::~Gateway() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    for (auto& weak : state_->streams)
      if (auto stream = weak.lock()) stream->close();
  }
  state_->work.notify_all();
  for (auto& thread : state_->threads) thread.join();
}

Answer Gateway::submit(const Json& body) {
  std::lock_guard lock(state_->mutex);
  auto request = parse_evaluate_request(body, state_->new_id());
  if (!request) return error_answer(400, request.error().message);
  auto known = state_->store->find(request->task_id);
  if (!known) return error_answer(500, known.error().message);
  if (*known)
    return Answer{200, Json{{"task_id", request->task_id}, {"status", task_state_name((*known)->state)}, {"duplicate", true}}, std::nullopt};
  if (state_->queue.size() >= state_->options.queue_capacity) return state_->refused_full(1);
  auto accepted = state_->accept(*request);
  if (!accepted) return error_answer(500, accepted.error().message);
  return Answer{200, Json{{"task_id", request->task_id}, {"status", "queued"}, {"duplicate", false}}, std::nullopt};
}

Answer Gateway::submit_batch(const Json& body) {
  const Json* tasks = &body;
  if (body.is_object() && body.contains("tasks")) tasks = &body["tasks"];
  if (!tasks->is_array())
    return error_answer(400, "a batch is a JSON list of evaluation requests, or {\"tasks\": [...]}");
  if (tasks->size() > state_->options.max_batch)
    return error_answer(400, "a batch holds at most " + std::to_string(state_->options.max_batch) + " tasks, got " +
                                 std::to_string(tasks->size()) + ": split it");
  std::lock_guard lock(state_->mutex);
  std::vector<EvaluateRequest> requests;
  size_t fresh = 0;
  for (size_t i = 0; i < tasks->size(); ++i) {
    auto request = parse_evaluate_request((*tasks)[i], state_->new_id());
    if (!request) return error_answer(400, "task " + std::to_string(i) + " of the batch: " + request.error().message);
    auto known = state_->store->find(request->task_id);
    if (!known) return error_answer(500, known.error().message);
    if (!*known) ++fresh;
    requests.push_back(std::move(*request));
  }
  // All or nothing: a batch that does not fit is refused whole, so that a retry submits it again.
  if (state_->queue.size() + fresh > state_->options.queue_capacity) return state_->refused_full(fresh);
  Json ids = Json::array();
  Json answers = Json::array();
  for (const auto& request : requests) {
    auto accepted = state_->accept(request);
    if (!accepted) return error_answer(500, accepted.error().message);
    ids.push_back(request.task_id);
    answers.push_back({{"task_id", request.task_id}, {"status", "queued"}, {"duplicate", !*accepted}});
  }
  return Answer{200, Json{{"task_ids", ids}, {"tasks", answers}}, std::nullopt};
}

Answer Gateway::status(const std::string& id) {
  auto task = state_->store->find(id);
  if (!task) return error_answer(500, task.error().message);
  if (!*task) return error_answer(404, "no task " + id + " (submit it with POST /evaluate)");
  Json body{{"task_id", id},
            {"status", task_state_name((*task)->state)},
            {"priority", (*task)->priority},
            {"submitted_at", static_cast<double>((*task)->submitted_ms) / 1000.0}};
  if ((*task)->finished_ms > 0) body["finished_at"] = static_cast<double>((*task)->finished_ms) / 1000.0;
  std::lock_guard lock(state_->mutex);
  if (auto queued = state_->queued.find(id); queued != state_->queued.end())
    body["position"] = std::distance(state_->queue.begin(), state_->queue.find(queued->second));
  return Answer{200, body, std::nullopt};
}

Answer Gateway::result(const std::string& id) {
  auto task = state_->store->find(id);
  if (!task) return error_answer(500, task.error().message);
  if (!*task) return error_answer(404, "no task " + id + " (submit it with POST /evaluate)");
  const TaskState state = (*task)->state;
  if (state == TaskState::completed || state == TaskState::failed)
    return Answer{200, Json::parse((*task)->result, nullptr, false), std::nullopt};
  const unsigned status = state == TaskState::cancelled ? 410 : 202;
  return Answer{status, Json{{"task_id", id}, {"status", task_state_name(state)}}, std::nullopt};
}

Answer Gateway::cancel(const std::string& id) {
  std::lock_guard lock(state_->mutex);
  auto task = state_->store->find(id);
  if (!task) return error_answer(500, task.error().message);
  if (!*task) return error_answer(404, "no task " + id);
  auto queued = state_->queued.find(id);
  if (queued == state_->queued.end())
    return error_answer(409, "task " + id + " is " + task_state_name((*task)->state) +
                                 ": only a queued task can be cancelled");
  state_->queue.erase(queued->second);
  state_->queued.erase(queued);
  if (auto done = state_->store->finish(id, TaskState::cancelled, "", unix_ms()); !done)
    return error_answer(500, done.error().message);
  ++state_->finished["cancelled"];
  return Answer{200, Json{{"task_id", id}, {"status", "cancelled"}}, std::nullopt};
}

Answer Gateway::health() {
  std::lock_guard lock(state_->mutex);
  size_t failed = 0;
  for (const auto& worker : state_->workers) failed += worker.state.rfind("failed", 0) == 0;
  const bool healthy = failed < state_->workers.size();
  return Answer{healthy ? 200u : 503u,
                Json{{"status", healthy ? "healthy" : "unhealthy"},
                     {"device", state_->options.device},
                     {"workers", state_->workers.size()},
                     {"workers_failed", failed},
                     {"queue_size", state_->queue.size()},
                     {"reward_formula", state_->options.reward_formula}},
                std::nullopt};
}

Answer Gateway::queue_status() {
  auto counts = state_->store->counts();
  if (!counts) return error_answer(500, counts.error().message);
  std::lock_guard lock(state_->mutex);
  size_t running = 0;
  for (const auto& worker : state_->workers) running += worker.state == "busy";
  auto count = [&](TaskState state) { return counts->contains(state) ? counts->at(state) : 0; };
  return Answer{200,
                Json{{"queue_size", state_->queue.size()},
                     {"capacity", state_->options.queue_capacity},
                     {"running", running},
                     {"completed", count(TaskState::completed)},
                     {"failed", count(TaskState::failed)},
                     {"cancelled", count(TaskState::cancelled)}},
                std::nullopt};
}

Answer Gateway::workers_status() {
  std::lock_guard lock(state_->mutex);
  Json workers = Json::array();
  for (size_t i = 0; i < state_->workers.size(); ++i) {
    const auto& worker = state_->workers[i];
    Json entry{{"worker_id", "worker-" + std::to_string(i)},
               {"device", state_->options.device},
               {"status", worker.state},
               {"tasks_evaluated", worker.evaluated}};
    entry["current_task"] = worker.task_id.empty() ? Json() : Json(worker.task_id);
    workers.push_back(entry);
  }
  return Answer{200, Json{{"workers", workers}}, std::nullopt};
}

std::string Gateway::metrics() {
  std::lock_guard lock(state_->mutex);
  runtime::metrics::PrometheusText text;
  text.counter("drk_gateway_tasks_submitted_total", "Tasks accepted since the gateway started.");
  text.sample({}, static_cast<double>(state_->submitted));
  text.counter("drk_gateway_tasks_rejected_total", "Submissions refused since the gateway started.");
  text.sample({{"reason", "queue_full"}}, static_cast<double>(state_->rejected_full));
  text.counter("drk_gateway_tasks_finished_total", "Tasks finished since the gateway started, by status.");
  for (const char* status : {"completed", "failed", "cancelled"})
    text.sample({{"status", status}}, static_cast<double>(state_->finished.contains(status) ? state_->finished.at(status) : 0));
  text.gauge("drk_gateway_queue_depth", "Tasks waiting for a worker.");
  text.sample({}, static_cast<double>(state_->queue.size()));
  text.gauge("drk_gateway_queue_capacity", "Queued tasks beyond which submissions get 429.");
  text.sample({}, static_cast<double>(state_->options.queue_capacity));
  text.gauge("drk_gateway_workers", "Workers by state.");
  std::map<std::string, int> states{{"starting", 0}, {"idle", 0}, {"busy", 0}, {"failed", 0}};
  for (const auto& worker : state_->workers) ++states[worker.state.substr(0, worker.state.find(':'))];
  for (const auto& [name, count] : states) text.sample({{"state", name}}, count);
  text.histogram_family("drk_gateway_evaluation_seconds", "Time from a task's start to its result.");
  text.histogram({}, state_->evaluation_seconds);
  text.gauge("drk_gateway_stream_clients", "Open result streams.");
  text.sample({}, static_cast<double>(state_->streams.size()));
  return text.text();
}

std::shared_ptr<runtime::http::EventStream> Gateway::subscribe() {
  auto stream = std::make_shared<runtime::http::EventStream>();
  std::lock_guard lock(state_->mutex);
  if (state_->stopping) stream->close();
  state_->streams.push_back(stream);
  return stream;
}

}  // namespace drk::gateway
