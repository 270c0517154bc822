// The gateway's HTTP API over real loopback connections, with scripted evaluators in place of the
// evaluation engine (the engine's own path is tests/integration/gateway_serve_test.cpp): submit,
// status and results; idempotent ids; batches; 429 with Retry-After when the queue is full;
// DELETE of a queued task; a restart that loses no accepted task (queued or running); a result
// pushed to an open stream; health, queue, workers and metrics (promtool accepts them); KernelGYM's knobs passed on as given.
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "runtime/http/http_server.h"
#include "tests/doctest_drk.h"
#include "tests/support/http_test_client.h"
#include "tests/support/promtool.h"
#include "tests/support/run_dir.h"
#include "tools/gateway/gateway.h"
#include "tools/gateway/gateway_routes.h"

namespace {

using drk::Json;
using drk::gateway::EvaluateRequest;
using drk::gateway::Gateway;
using drk::gateway::GatewayOptions;
using drk::gateway::TaskEvaluator;
using drk::testing::http_request;

// Answers every task at once: correct when the kernel_code says "honest".
class ScriptedEvaluator : public TaskEvaluator {
 public:
  Json evaluate(const EvaluateRequest& request) override {
    const bool honest = request.kernel_code.find("honest") != std::string::npos;
    return Json{{"task_id", request.task_id}, {"status", "completed"}, {"compiled", true},
                {"correctness", honest}, {"decoy_kernel", !honest}, {"reward", honest ? 1.0 : 0.0}};
  }
};

// Holds every task until open() is called: a worker busy for as long as the test wants.
struct Gate {
  std::mutex mutex;
  std::condition_variable opened_signal;
  std::condition_variable entered_signal;
  bool opened = false;
  int entered = 0;

  void open() {
    std::lock_guard lock(mutex);
    opened = true;
    opened_signal.notify_all();
  }
  void wait_entered(int count) {
    std::unique_lock lock(mutex);
    entered_signal.wait(lock, [&] { return entered >= count; });
  }
};

class GatedEvaluator : public ScriptedEvaluator {
 public:
  explicit GatedEvaluator(Gate& gate) : gate_(gate) {}
  Json evaluate(const EvaluateRequest& request) override {
    std::unique_lock lock(gate_.mutex);
    ++gate_.entered;
    gate_.entered_signal.notify_all();
    gate_.opened_signal.wait(lock, [&] { return gate_.opened; });
    return ScriptedEvaluator::evaluate(request);
  }

 private:
  Gate& gate_;
};

drk::gateway::TaskEvaluatorFactory scripted() {
  return [](size_t) -> drk::Result<std::unique_ptr<TaskEvaluator>> { return std::unique_ptr<TaskEvaluator>(std::make_unique<ScriptedEvaluator>()); };
}

drk::gateway::TaskEvaluatorFactory gated(Gate& gate) {
  return [&gate](size_t) -> drk::Result<std::unique_ptr<TaskEvaluator>> {
    return std::unique_ptr<TaskEvaluator>(std::make_unique<GatedEvaluator>(gate));
  };
}

// A gateway and its HTTP server on a free loopback port.
struct Served {
  Served(GatewayOptions options, drk::gateway::TaskEvaluatorFactory evaluators) {
    auto opened = Gateway::open(options, std::move(evaluators));
    DRK_REQUIRE_MESSAGE(opened.ok(), (opened ? "" : opened.error().message));
    gateway = std::move(*opened);
    auto started = drk::runtime::http::HttpServer::start({}, drk::gateway::gateway_router(*gateway));
    DRK_REQUIRE_MESSAGE(started.ok(), (started ? "" : started.error().message));
    server = std::move(*started);
  }
  ~Served() {
    server.reset();  // no request reaches the gateway once it is gone
    gateway.reset();
  }
  Json get(const std::string& target) { return Json::parse(http_request(server->port(), "GET", target).body); }

  std::unique_ptr<Gateway> gateway;
  std::unique_ptr<drk::runtime::http::HttpServer> server;
};

std::string evaluate_body(const std::string& id, const std::string& kernel) {
  return drk::json_text(Json{{"task_id", id}, {"reference_code", "class Model: ..."}, {"kernel_code", kernel},
                             {"backend", "pytorch"}});
}

GatewayOptions options_in(const drk::testing::RunDir& dir, size_t workers = 1) {
  GatewayOptions options;
  options.state_dir = dir.file("gateway");
  options.workers = workers;
  return options;
}

// The result of `id` once it is finished, read from the stream opened before it was submitted.
Json streamed_result(drk::testing::SseTestClient& stream, const std::string& id) {
  while (auto event = stream.next_event()) {
    Json result = Json::parse(*event);
    if (result["task_id"] == id) return result;
  }
  return Json();
}

}  // namespace

DRK_TEST_CASE("an honest and a hacking candidate: accepted, then their results, verdict and reward") {
  drk::testing::RunDir dir;
  Served served(options_in(dir), scripted());
  drk::testing::SseTestClient stream(served.server->port(), "/results/stream");
  auto accepted = http_request(served.server->port(), "POST", "/evaluate", evaluate_body("honest-1", "honest"));
  DRK_REQUIRE(accepted.status == 200);
  DRK_CHECK(Json::parse(accepted.body)["task_id"] == "honest-1");
  auto hacked = http_request(served.server->port(), "POST", "/evaluate", evaluate_body("", "hack"));
  DRK_REQUIRE(hacked.status == 200);
  const std::string hacked_id = Json::parse(hacked.body)["task_id"];
  DRK_CHECK(hacked_id.rfind("drk-", 0) == 0);

  DRK_CHECK(streamed_result(stream, "honest-1")["correctness"] == true);
  DRK_CHECK(streamed_result(stream, hacked_id)["decoy_kernel"] == true);
  auto result = served.get("/results/honest-1");
  DRK_CHECK(result["status"] == "completed");
  DRK_CHECK(result["reward"] == 1.0);
  DRK_CHECK(result.contains("processing_time"));
  DRK_CHECK(served.get("/status/honest-1")["status"] == "completed");
  DRK_CHECK(served.get("/results/" + hacked_id)["correctness"] == false);
  DRK_CHECK(http_request(served.server->port(), "GET", "/results/nobody").status == 404);
  DRK_CHECK(served.get("/health")["status"] == "healthy");
}

DRK_TEST_CASE("a malformed request is refused with the field it is about") {
  drk::testing::RunDir dir;
  Served served(options_in(dir), scripted());
  auto no_kernel = http_request(served.server->port(), "POST", "/evaluate", R"({"reference_code": "x"})");
  DRK_CHECK(no_kernel.status == 400);
  DRK_CHECK(no_kernel.body.find("kernel_code") != std::string::npos);
  auto bad_backend = http_request(served.server->port(), "POST", "/evaluate",
                                  R"({"reference_code": "x", "kernel_code": "y", "backend": "fortran"})");
  DRK_CHECK(bad_backend.status == 400);
  DRK_CHECK(bad_backend.body.find("fortran") != std::string::npos);
  DRK_CHECK(http_request(served.server->port(), "POST", "/evaluate", "not json").status == 400);
  auto no_trials = http_request(served.server->port(), "POST", "/evaluate",
                                R"({"reference_code": "x", "kernel_code": "y", "num_correct_trials": 0})");
  DRK_CHECK(no_trials.status == 400);
  DRK_CHECK(no_trials.body.find("num_correct_trials") != std::string::npos);
  auto no_time = http_request(served.server->port(), "POST", "/evaluate",
                              R"({"reference_code": "x", "kernel_code": "y", "timeout": 0})");
  DRK_CHECK(no_time.status == 400);
  DRK_CHECK(no_time.body.find("timeout") != std::string::npos);
}

DRK_TEST_CASE("KernelGYM's knobs reach the evaluator as given, and stay unset where not given") {
  drk::testing::RunDir dir;
  std::optional<EvaluateRequest> seen;
  std::mutex seen_mutex;
  struct Recording : ScriptedEvaluator {
    Recording(std::optional<EvaluateRequest>& into, std::mutex& mutex) : into_(into), mutex_(mutex) {}
    Json evaluate(const EvaluateRequest& request) override {
      std::lock_guard lock(mutex_);
      into_ = request;
      return ScriptedEvaluator::evaluate(request);
    }
    std::optional<EvaluateRequest>& into_;
    std::mutex& mutex_;
  };
  Served served(options_in(dir), [&](size_t) -> drk::Result<std::unique_ptr<TaskEvaluator>> {
    return std::unique_ptr<TaskEvaluator>(std::make_unique<Recording>(seen, seen_mutex));
  });
  drk::testing::SseTestClient stream(served.server->port(), "/results/stream");
  auto given = http_request(served.server->port(), "POST", "/evaluate",
                            R"({"task_id": "given", "reference_code": "x", "kernel_code": "honest",
                                "num_correct_trials": 3, "num_perf_trials": 7, "timeout": 2.5})");
  DRK_REQUIRE(given.status == 200);
  streamed_result(stream, "given");
  {
    std::lock_guard lock(seen_mutex);
    DRK_REQUIRE(seen.has_value());
    DRK_CHECK(seen->num_correct_trials == 3);
    DRK_CHECK(seen->num_perf_trials == 7);
    DRK_CHECK(seen->timeout == 2.5);
    DRK_CHECK_FALSE(seen->num_warmup.has_value());
  }
  DRK_REQUIRE(http_request(served.server->port(), "POST", "/evaluate", evaluate_body("plain", "honest")).status == 200);
  streamed_result(stream, "plain");
  std::lock_guard lock(seen_mutex);
  DRK_CHECK_FALSE(seen->num_correct_trials.has_value());
  DRK_CHECK_FALSE(seen->timeout.has_value());
}

DRK_TEST_CASE("a full queue answers 429 with Retry-After; the same id again is idempotent; a queued task is cancelled") {
  drk::testing::RunDir dir;
  Gate gate;
  GatewayOptions options = options_in(dir);
  options.queue_capacity = 2;
  Served served(options, gated(gate));
  const uint16_t port = served.server->port();
  DRK_REQUIRE(http_request(port, "POST", "/evaluate", evaluate_body("a", "honest")).status == 200);
  gate.wait_entered(1);  // "a" runs; the queue is empty again
  DRK_REQUIRE(http_request(port, "POST", "/evaluate", evaluate_body("b", "honest")).status == 200);
  DRK_REQUIRE(http_request(port, "POST", "/evaluate", evaluate_body("c", "honest")).status == 200);
  auto full = http_request(port, "POST", "/evaluate", evaluate_body("d", "honest"));
  DRK_CHECK(full.status == 429);
  DRK_CHECK(full.header("Retry-After") == "5");
  auto again = http_request(port, "POST", "/evaluate", evaluate_body("b", "honest"));
  DRK_CHECK(again.status == 200);
  DRK_CHECK(Json::parse(again.body)["duplicate"] == true);
  DRK_CHECK(served.get("/queue/status")["queue_size"] == 2);
  DRK_CHECK(served.get("/workers/status")["workers"][0]["current_task"] == "a");

  DRK_CHECK(http_request(port, "DELETE", "/tasks/c").status == 200);
  DRK_CHECK(served.get("/status/c")["status"] == "cancelled");
  DRK_CHECK(http_request(port, "DELETE", "/tasks/a").status == 409);  // running
  DRK_CHECK(http_request(port, "POST", "/evaluate", evaluate_body("d", "honest")).status == 200);
  const std::string metrics = http_request(port, "GET", "/metrics").body;
  DRK_CHECK(metrics.find("drk_gateway_tasks_rejected_total{reason=\"queue_full\"} 1") != std::string::npos);
  DRK_CHECK(metrics.find("drk_gateway_queue_depth 2") != std::string::npos);
  if (const auto checked = drk::testing::promtool_check(metrics)) {
    DRK_CHECK_MESSAGE(checked->exit_code == 0, checked->output);
  } else {
    DRK_MESSAGE(drk::testing::kPromtoolMissing);
  }
  gate.open();
}

DRK_TEST_CASE("a batch is accepted whole, or refused whole when it does not fit or is too long") {
  drk::testing::RunDir dir;
  Gate gate;
  GatewayOptions options = options_in(dir);
  options.queue_capacity = 3;
  options.max_batch = 4;
  Served served(options, gated(gate));
  const uint16_t port = served.server->port();
  auto batch = [](int first, int count) {
    Json tasks = Json::array();
    for (int i = first; i < first + count; ++i)
      tasks.push_back(Json::parse(evaluate_body("t" + std::to_string(i), "honest")));
    return drk::json_text(Json{{"tasks", tasks}});
  };
  auto accepted = http_request(port, "POST", "/evaluate/batch", batch(0, 3));
  DRK_REQUIRE(accepted.status == 200);
  DRK_CHECK(Json::parse(accepted.body)["task_ids"].size() == 3);
  gate.wait_entered(1);
  DRK_CHECK(http_request(port, "POST", "/evaluate/batch", batch(3, 2)).status == 429);
  DRK_CHECK(served.get("/status/t3")["error"].is_string());  // nothing of the refused batch was kept
  DRK_CHECK(http_request(port, "POST", "/evaluate/batch", batch(10, 5)).status == 400);
  gate.open();
  drk::testing::SseTestClient stream(port, "/results/stream");
  for (int i = 0; i < 3; ++i)
    if (served.get("/status/t" + std::to_string(i))["status"] != "completed")
      DRK_CHECK(!streamed_result(stream, "t" + std::to_string(i)).is_null());
  for (int i = 0; i < 3; ++i) DRK_CHECK(served.get("/results/t" + std::to_string(i))["correctness"] == true);
}

DRK_TEST_CASE("a gateway that dies with tasks queued and running loses none: the next one finishes them") {
  drk::testing::RunDir dir;
  Gate stuck;  // never opened before the second gateway has finished: the first one's worker is "dead"
  auto first = std::make_unique<Served>(options_in(dir), gated(stuck));
  for (const char* id : {"r1", "r2", "r3"})
    DRK_REQUIRE(http_request(first->server->port(), "POST", "/evaluate", evaluate_body(id, "honest")).status == 200);
  stuck.wait_entered(1);
  DRK_CHECK(first->get("/status/r1")["status"] == "running");
  first->server.reset();  // it answers nobody any more

  // The second gateway opens the same state directory while the first is stuck, as after a kill.
  Served second(options_in(dir), scripted());
  drk::testing::SseTestClient stream(second.server->port(), "/results/stream");
  for (const char* id : {"r1", "r2", "r3"})
    if (second.get(std::string("/status/") + id)["status"] != "completed")
      DRK_CHECK(!streamed_result(stream, id).is_null());
  for (const char* id : {"r1", "r2", "r3"})
    DRK_CHECK(second.get(std::string("/results/") + id)["correctness"] == true);
  stuck.open();
  first.reset();
}
