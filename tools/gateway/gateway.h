// Gateway: drkernel as the reward service of a Python trainer (`drk serve`, docs/gateway.md).
// Accepted tasks go to a durable store (task_store.h) and a bounded priority queue; worker
// threads, each with a TaskEvaluator of its own, evaluate them in order of priority, then
// acceptance; results are stored and published to every open stream. A submission is idempotent
// by task_id: the same id again answers the task already recorded. A gateway opened on the state
// directory of one that died re-queues its queued and running tasks.
//
// Thread-safety: every public member may be called from any thread (the HTTP server's).
// Ownership: the gateway owns its store, queue and workers; destroying it stops the workers once
// their current task returns (a task interrupted by a kill stays recorded as running and is
// re-queued by the next gateway). Errors: open() returns the store's; submissions refused are
// answers (400 malformed, 429 queue full, 503 no worker can start).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/json_text.h"
#include "base/result.h"
#include "runtime/http/event_stream.h"
#include "tools/gateway/task_evaluator.h"

namespace drk::gateway {

struct GatewayOptions {
  std::string state_dir;        // holds gateway.sqlite (and the evaluator's files)
  size_t queue_capacity = 256;  // queued tasks beyond which a submission is answered 429
  size_t workers = 1;
  size_t max_batch = 100;
  std::chrono::seconds retry_after{5};  // the Retry-After of a 429
  std::string device = "cpu";           // what /health and /workers/status report
  Json reward_formula;                  // what /health reports (evaluation_result.h)
};

// What a submission is answered: an HTTP status and its JSON body (plus Retry-After for 429).
struct Answer {
  unsigned status = 200;
  Json body;
  std::optional<std::chrono::seconds> retry_after;
};

class Gateway {
 public:
  static Result<std::unique_ptr<Gateway>> open(const GatewayOptions& options, TaskEvaluatorFactory evaluators);
  ~Gateway();
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  Answer submit(const Json& body);        // POST /evaluate
  Answer submit_batch(const Json& body);  // POST /evaluate/batch: {"tasks": [...]} or a list
  Answer status(const std::string& id);   // GET /status/{id}
  Answer result(const std::string& id);   // GET /results/{id}: 202 while not finished
  Answer cancel(const std::string& id);   // DELETE /tasks/{id}: a queued task only
  Answer health();
  Answer queue_status();
  Answer workers_status();
  std::string metrics();  // Prometheus text format
  // A stream that gets every result finished from now on (event "result").
  std::shared_ptr<runtime::http::EventStream> subscribe();

 private:
  struct State;
  explicit Gateway(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace drk::gateway
