#include "tools/bench/gateway_bench.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <iomanip>
#include <map>
#include <mutex>
#include <thread>

#include "actors/evaluator/engine/timing_summary.h"
#include "base/parallel_for.h"
#include "runtime/http/http_server.h"
#include "runtime/http_client/http_exchange.h"
#include "runtime/http_client/sse_decoder.h"
#include "tools/bench/source_tree.h"
#include "tools/bench/temp_dir.h"
#include "tools/gateway/gateway.h"
#include "tools/gateway/gateway_routes.h"

namespace drk::bench {
namespace {

using Clock = std::chrono::steady_clock;
using gateway::EvaluateRequest;
using gateway::TaskEvaluator;

// No HTTP exchange of the bench may take longer: a gateway that stops answering ends the run.
constexpr std::chrono::minutes kExchangeLimit{5};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// "" for a completed, correct evaluation; otherwise what it was.
std::string failure_of(const Json& result) {
  if (!result.is_object()) return "an answer that is not a JSON object";
  if (result.value("status", "") == "completed" && result.value("correctness", false)) return "";
  return "task " + result.value("task_id", "?") + ": " + json_text(result).substr(0, 400);
}

struct RunResult {
  std::string mode;
  size_t clients = 0;
  double wall_s = 0;
  std::vector<double> latencies_s;
  std::string failure;  // the first, "" if none
};

// The load: `clients` threads, each submitting the next of `tasks` evaluations and waiting for its
// result (`evaluate(index)` returns its failure, "" if none) until none is left.
RunResult drive(const std::string& mode, size_t clients, size_t tasks,
                const std::function<std::string(size_t)>& evaluate) {
  RunResult run{mode, clients, 0, {}, ""};
  std::mutex mutex;
  const auto started = Clock::now();
  parallel_for(tasks, clients, [&](size_t index, size_t) {
    const auto submitted = Clock::now();
    const std::string failure = evaluate(index);
    const double latency = seconds_since(submitted);
    std::lock_guard lock(mutex);
    run.latencies_s.push_back(latency);
    if (run.failure.empty()) run.failure = failure;
  });
  run.wall_s = seconds_since(started);
  return run;
}

// The evaluators driven directly: `workers` threads, each with its evaluator, serving a queue.
class DirectEvaluators {
 public:
  DirectEvaluators(const gateway::TaskEvaluatorFactory& factory, size_t workers) {
    std::vector<std::future<std::string>> created;
    for (size_t w = 0; w < workers; ++w) {
      auto made = std::make_shared<std::promise<std::string>>();
      created.push_back(made->get_future());
      threads_.emplace_back([this, &factory, w, made] {
        auto evaluator = factory(w);
        made->set_value(evaluator ? "" : evaluator.error().message);
        if (evaluator) serve(**evaluator);
      });
    }
    for (auto& made : created)
      if (auto failure = made.get(); !failure.empty() && failure_.empty()) failure_ = failure;
  }
  ~DirectEvaluators() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& thread : threads_) thread.join();
  }

  const std::string& failure() const { return failure_; }

  Json evaluate(EvaluateRequest request) {
    std::promise<Json> answer;
    auto result = answer.get_future();
    {
      std::lock_guard lock(mutex_);
      queue_.emplace_back(std::move(request), std::move(answer));
    }
    wake_.notify_one();
    return result.get();
  }

 private:
  void serve(TaskEvaluator& evaluator) {
    for (;;) {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      auto [request, answer] = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      answer.set_value(evaluator.evaluate(request));
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::deque<std::pair<EvaluateRequest, std::promise<Json>>> queue_;
  std::vector<std::thread> threads_;
  std::string failure_;
};

// drk serve's gateway and HTTP server on loopback, over a fresh state directory, its workers
// started (engines made) before it is used; and the results its stream delivers, by task id.
class ServedGateway {
 public:
  ServedGateway(const gateway::TaskEvaluatorFactory& factory, size_t workers) : state_(temp_dir("drk-bench-gateway")) {
    gateway::GatewayOptions options;
    options.state_dir = state_.path();
    options.workers = workers;
    options.queue_capacity = 4096;
    auto opened = gateway::Gateway::open(options, factory);
    if (!opened) {
      failure_ = opened.error().message;
      return;
    }
    gateway_ = std::move(*opened);
    for (bool starting = true; starting;) {
      starting = false;
      const Json workers = gateway_->workers_status().body["workers"];  // a local: see serve_command.cpp
      for (const auto& worker : workers) {
        const std::string state = worker["status"].get<std::string>();
        if (state == "starting") starting = true;
        if (state.rfind("failed", 0) == 0) failure_ = state;
      }
      if (!failure_.empty()) return;
      if (starting) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    runtime::http::HttpServerOptions server_options;
    server_options.threads = 4;
    auto server = runtime::http::HttpServer::start(server_options, gateway::gateway_router(*gateway_));
    if (!server) {
      failure_ = server.error().message;
      return;
    }
    server_ = std::move(*server);
    url_ = *http_client::parse_http_url("http://127.0.0.1:" + std::to_string(server_->port()));
  }
  ~ServedGateway() {
    server_.reset();  // ends the stream's connection, so that its reader returns
    if (stream_reader_.joinable()) stream_reader_.join();
  }

  const std::string& failure() const { return failure_; }

  Result<http_client::HttpResponse> exchange(const std::string& method, const std::string& target,
                                             const std::string& body = "") const {
    http_client::HttpRequest request{target, body, "application/json", {}, method};
    http_client::ExchangeOptions options;
    options.deadline = Clock::now() + kExchangeLimit;
    return http_client::http_exchange(url_, request, options);
  }

  // Opens /results/stream, and returns once the gateway counts it (drk_gateway_stream_clients):
  // results reach wait_for_streamed() from then on.
  void open_stream() {
    stream_reader_ = std::thread([this] {
      http_client::SseDecoder decoder;
      http_client::ExchangeOptions options;
      options.deadline = Clock::now() + std::chrono::hours(1);
      options.on_body = [&](std::string_view piece) {
        for (auto& event : decoder.feed(piece)) {
          Json result = Json::parse(event, nullptr, false);
          if (result.is_discarded() || !result.contains("task_id")) continue;
          const std::string id = result["task_id"].get<std::string>();
          std::lock_guard lock(mutex_);
          streamed_[id] = std::move(result);
          arrived_.notify_all();
        }
      };
      http_client::HttpRequest request{"/results/stream", "", "application/json", {}, "GET"};
      // Ends when the server closes the stream (the destructor).
      [[maybe_unused]] auto ended = http_client::http_exchange(url_, request, options);
    });
    for (;;) {
      auto metrics = exchange("GET", "/metrics");
      if (metrics && metrics->body.find("drk_gateway_stream_clients 1") != std::string::npos) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  Json wait_for_streamed(const std::string& id) {
    std::unique_lock lock(mutex_);
    if (!arrived_.wait_for(lock, kExchangeLimit, [&] { return streamed_.count(id) > 0; }))
      return Json{{"task_id", id}, {"status", "no result streamed within the limit"}};
    return streamed_[id];
  }

 private:
  TemporaryDirectory state_;
  std::unique_ptr<gateway::Gateway> gateway_;
  std::unique_ptr<runtime::http::HttpServer> server_;
  http_client::HttpUrl url_;
  std::string failure_;
  std::thread stream_reader_;
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::map<std::string, Json> streamed_;
};

Json with_id(const Json& body, const std::string& id) {
  Json request = body;
  request["task_id"] = id;
  return request;
}

// A client's POST /evaluate; "" when accepted.
std::string submit(ServedGateway& served, const Json& request) {
  auto answer = served.exchange("POST", "/evaluate", request.dump());
  if (!answer) return answer.error().message;
  if (answer->status != 200) return "POST /evaluate: " + std::to_string(answer->status) + " " + answer->body;
  return "";
}

RunResult run_direct(const gateway::TaskEvaluatorFactory& factory, const GatewayBenchOptions& options, size_t clients,
                     const std::vector<Json>& bodies) {
  DirectEvaluators direct(factory, options.workers);
  if (!direct.failure().empty()) return RunResult{"direct", clients, 0, {}, direct.failure()};
  return drive("direct", clients, options.tasks, [&](size_t index) {
    auto request = gateway::parse_evaluate_request(bodies[index % bodies.size()], "direct-" + std::to_string(index));
    if (!request) return request.error().message;
    return failure_of(direct.evaluate(*request));
  });
}

RunResult run_stream(const gateway::TaskEvaluatorFactory& factory, const GatewayBenchOptions& options, size_t clients,
                     const std::vector<Json>& bodies) {
  ServedGateway served(factory, options.workers);
  if (!served.failure().empty()) return RunResult{"stream", clients, 0, {}, served.failure()};
  served.open_stream();
  return drive("stream", clients, options.tasks, [&](size_t index) {
    const std::string id = "stream-" + std::to_string(index);
    if (auto refused = submit(served, with_id(bodies[index % bodies.size()], id)); !refused.empty()) return refused;
    return failure_of(served.wait_for_streamed(id));
  });
}

RunResult run_polling(const gateway::TaskEvaluatorFactory& factory, const GatewayBenchOptions& options,
                      size_t clients, const std::vector<Json>& bodies) {
  ServedGateway served(factory, options.workers);
  if (!served.failure().empty()) return RunResult{"polling", clients, 0, {}, served.failure()};
  return drive("polling", clients, options.tasks, [&](size_t index) -> std::string {
    const std::string id = "polling-" + std::to_string(index);
    if (auto refused = submit(served, with_id(bodies[index % bodies.size()], id)); !refused.empty()) return refused;
    for (;;) {
      std::this_thread::sleep_for(options.poll_interval);
      auto status = served.exchange("GET", "/status/" + id);
      if (!status) return status.error().message;
      const Json state = Json::parse(status->body, nullptr, false);
      if (state.is_discarded()) return "GET /status: " + status->body;
      const std::string now = state.value("status", "");
      if (now == "queued" || now == "running") continue;
      auto result = served.exchange("GET", "/results/" + id);
      if (!result) return result.error().message;
      return failure_of(Json::parse(result->body, nullptr, false));
    }
  });
}

void print_header(std::ostream& out) {
  out << std::left << std::setw(9) << "mode" << std::right << std::setw(8) << "clients" << std::setw(7) << "tasks"
      << std::setw(10) << "wall s" << std::setw(9) << "eval/s" << std::setw(9) << "p50 s" << std::setw(9) << "p95 s"
      << std::setw(13) << "eval/s ratio" << std::setw(11) << "p50 ratio" << "\n";
}

void print_run(std::ostream& out, const RunResult& run, const RunResult* direct) {
  std::vector<double> sorted = run.latencies_s;
  std::sort(sorted.begin(), sorted.end());
  const double throughput = run.wall_s > 0 ? run.latencies_s.size() / run.wall_s : 0;
  const double p50 = evaluator::percentile(sorted, 0.5);
  out << std::left << std::setw(9) << run.mode << std::right << std::setw(8) << run.clients << std::setw(7)
      << run.latencies_s.size() << std::fixed << std::setprecision(2) << std::setw(10) << run.wall_s << std::setw(9)
      << throughput << std::setw(9) << p50 << std::setw(9) << evaluator::percentile(sorted, 0.95);
  if (direct && direct->wall_s > 0 && !direct->latencies_s.empty()) {
    std::vector<double> direct_sorted = direct->latencies_s;
    std::sort(direct_sorted.begin(), direct_sorted.end());
    const double direct_throughput = direct->latencies_s.size() / direct->wall_s;
    out << std::setw(13) << throughput / direct_throughput << std::setw(11)
        << p50 / evaluator::percentile(direct_sorted, 0.5);
  }
  out << "\n";
}

}  // namespace

// KernelBench's ReLU at 16 x 4096 and two ModelNew for it, the files the tests use.
constexpr const char* kProblem = "tests/corpus/kernelbench/level1/19_ReLU.py";
constexpr const char* kPytorchCandidate = "tests/candidates/kernelbench/relu_pytorch.py";
constexpr const char* kCppCandidate = "tests/candidates/kernelbench/relu_cpp.py";

Result<std::vector<Json>> gateway_bench_bodies(uint32_t trials) {
  std::map<std::string, std::string> sources;
  for (const char* relative : {kProblem, kPytorchCandidate, kCppCandidate}) {
    auto text = read_source_file(relative);
    if (!text)
      return make_error(Errc::not_found, "cannot read '" + source_dir() + "/" + relative +
                                             "': set DRK_SOURCE_DIR to the drkernel source tree");
    sources[relative] = *text;
  }
  std::vector<Json> bodies;
  for (const auto& [candidate, backend] : {std::pair{kPytorchCandidate, "pytorch"}, std::pair{kCppCandidate, "cpp"}})
    bodies.push_back(Json{{"reference_code", sources[kProblem]},
                          {"kernel_code", sources[candidate]},
                          {"backend", backend},
                          {"num_correct_trials", trials}});
  return bodies;
}

int run_gateway_bench(const GatewayBenchOptions& options, const gateway::TaskEvaluatorFactory& evaluators,
                      const std::vector<Json>& bodies, std::ostream& out) {
  out << "drk bench gateway: " << options.tasks << " evaluations a run, " << options.workers
      << " worker(s), request bodies in turn: " << bodies.size() << "\n";
  {
    DirectEvaluators warm_up(evaluators, 1);
    if (!warm_up.failure().empty()) {
      out << "no evaluator: " << warm_up.failure() << "\n";
      return 1;
    }
    for (size_t i = 0; i < bodies.size(); ++i) {
      auto request = gateway::parse_evaluate_request(bodies[i], "warm-up-" + std::to_string(i));
      const std::string failure = request ? failure_of(warm_up.evaluate(*request)) : request.error().message;
      if (!failure.empty()) {
        out << "the warm-up evaluation of request " << i << " failed: " << failure << "\n";
        return 1;
      }
    }
  }
  std::vector<RunResult> runs;
  std::map<size_t, RunResult> direct_by_clients;
  auto record = [&](RunResult run) {
    if (run.mode == "direct") direct_by_clients[run.clients] = run;
    runs.push_back(std::move(run));
    out << "  ran " << runs.back().mode << " with " << runs.back().clients << " client(s) in " << std::fixed
        << std::setprecision(1) << runs.back().wall_s << " s\n" << std::flush;
  };
  for (size_t clients : options.clients) {
    record(run_direct(evaluators, options, clients, bodies));
    record(run_stream(evaluators, options, clients, bodies));
  }
  for (size_t clients : options.polling_clients) {
    if (!direct_by_clients.count(clients)) record(run_direct(evaluators, options, clients, bodies));
    record(run_polling(evaluators, options, clients, bodies));
  }
  out << "\nratios: against the direct run with as many clients\n";
  print_header(out);
  int status = 0;
  for (const auto& run : runs) {
    const auto direct = direct_by_clients.find(run.clients);
    print_run(out, run, run.mode == "direct" || direct == direct_by_clients.end() ? nullptr : &direct->second);
    if (!run.failure.empty()) {
      out << "  failed: " << run.failure << "\n";
      status = 1;
    }
  }
  return status;
}

}  // namespace drk::bench
