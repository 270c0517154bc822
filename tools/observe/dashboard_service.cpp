#include "tools/observe/dashboard_service.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "base/json_text.h"
#include "runtime/http/event_stream.h"
#include "runtime/http/http_server.h"
#include "runtime/log.h"
#include "tools/observe/dashboard_page.h"
#include "tools/observe/run_metrics.h"
#include "tools/observe/run_records.h"
#include "tools/observe/run_snapshot.h"

namespace drk::observe {
namespace {

namespace http = runtime::http;

// Snapshots a client has not read yet beyond which its stream closes (its EventSource reconnects
// and starts from the newest).
constexpr size_t kMaxPendingSnapshots = 8;

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct DashboardService::State {
  std::string run_dir;
  SystemSource system;
  std::chrono::milliseconds check_every;

  std::mutex mutex;  // everything below
  RunRecords records;
  std::string last_refresh_error;
  std::string published;  // the snapshot last pushed, its clock at 0: what "changed" compares
  std::vector<std::weak_ptr<http::EventStream>> streams;
  bool stopping = false;
  std::condition_variable wake;

  std::thread checker;
  std::unique_ptr<http::HttpServer> server;

  State(std::string dir, SystemSource source, std::chrono::milliseconds every)
      : run_dir(dir), system(std::move(source)), check_every(every), records(std::move(dir)) {}

  void refresh_locked() {
    auto refreshed = records.refresh();
    const std::string error = refreshed ? "" : refreshed.error().message;
    if (!error.empty() && error != last_refresh_error) log::warn() << "dashboard: " << error;
    last_refresh_error = error;
  }

  // The snapshot's text, and the same with its clock at 0 (what "changed" compares).
  std::pair<std::string, std::string> snapshot_locked() {
    refresh_locked();
    Json snapshot = run_snapshot(records, system(), 0);
    std::string unclocked = json_text(snapshot);
    snapshot["run"]["now_unix_ms"] = unix_ms();
    return {json_text(snapshot), std::move(unclocked)};
  }

  // Pushes the snapshot to every open stream when it changed since the last push; returns its text.
  std::string push_locked() {
    auto [text, unclocked] = snapshot_locked();
    if (unclocked != published) {
      published = std::move(unclocked);
      for (const auto& weak : streams)
        if (auto stream = weak.lock()) stream->publish("snapshot", text);
    }
    return text;
  }

  // A new client gets the snapshot at once, then each change.
  http::HttpResponse subscribe() {
    auto stream = std::make_shared<http::EventStream>(kMaxPendingSnapshots);
    std::lock_guard lock(mutex);
    if (stopping) {
      stream->close();
    } else {
      stream->publish("snapshot", push_locked());
      streams.push_back(stream);
    }
    http::HttpResponse response;
    response.content_type = "text/event-stream";
    response.events = std::move(stream);
    return response;
  }

  // The checking thread: every check_every, while a client listens.
  void check() {
    std::unique_lock lock(mutex);
    while (!wake.wait_for(lock, check_every, [this] { return stopping; })) {
      std::erase_if(streams, [](const auto& stream) {
        const auto open = stream.lock();
        return !open || open->closed();
      });
      if (!streams.empty()) push_locked();
    }
  }

  http::Router router() {
    http::Router routes;
    routes.add("GET", "/", [](const http::HttpRequest&, const http::PathParameters&) {
      http::HttpResponse response;
      response.content_type = "text/html; charset=utf-8";
      response.body = std::string(dashboard_page_html());
      return response;
    });
    routes.add("GET", "/api/snapshot", [this](const http::HttpRequest&, const http::PathParameters&) {
      std::lock_guard lock(mutex);
      return http::HttpResponse::json(200, snapshot_locked().first);
    });
    routes.add("GET", "/api/events",
               [this](const http::HttpRequest&, const http::PathParameters&) { return subscribe(); });
    routes.add("GET", "/metrics", [this](const http::HttpRequest&, const http::PathParameters&) {
      http::HttpResponse response;
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      std::lock_guard lock(mutex);
      refresh_locked();
      response.body = run_metrics(records, system());
      return response;
    });
    return routes;
  }
};

Result<std::unique_ptr<DashboardService>> DashboardService::start(const DashboardOptions& options,
                                                                   std::string run_dir, SystemSource system) {
  std::unique_ptr<DashboardService> service(new DashboardService());
  service->state_ = std::make_unique<State>(std::move(run_dir), std::move(system), options.check_every);
  State& state = *service->state_;
  http::HttpServerOptions server_options;
  server_options.address = options.address;
  server_options.port = options.port;
  server_options.bearer_token = options.bearer_token;
  auto server = http::HttpServer::start(server_options, state.router());
  if (!server) return server.error();
  state.server = std::move(*server);
  state.checker = std::thread([&state] { state.check(); });
  return service;
}

DashboardService::~DashboardService() {
  if (!state_) return;
  {
    std::lock_guard lock(state_->mutex);
    state_->stopping = true;
    for (const auto& weak : state_->streams)
      if (auto stream = weak.lock()) stream->close();
  }
  state_->wake.notify_all();
  if (state_->checker.joinable()) state_->checker.join();
  state_->server.reset();
}

uint16_t DashboardService::port() const { return state_->server->port(); }

}  // namespace drk::observe
