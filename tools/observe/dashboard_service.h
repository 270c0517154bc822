// DashboardService: the HTTP service of a running head (`drk run --dashboard [ADDR:]PORT`,
// docs/dashboard.md), on runtime/http's server:
//   GET /              the dashboard's page (dashboard_page.h)
//   GET /api/snapshot  the run's state as JSON (run_snapshot.h)
//   GET /api/events    server-sent events: an event `snapshot` with the whole JSON at once, then
//                      again whenever it changed (checked every `check_every`, by one thread for
//                      every client, and only while a client listens); the clock's field
//                      run.now_unix_ms alone is no change
//   GET /metrics       Prometheus's text format (run_metrics.h)
// With a bearer token every request needs it (401 otherwise); the caller decides, with
// runtime/http/bearer_auth.h's required_token, that one listening beyond loopback has one.
//
// Thread-safety: start() and the destructor from one thread; the routes run on the server's
// threads and share the run's records under one mutex. Ownership: the service owns its server,
// its checking thread and the run's records; `system` (the head's live view) must stay callable
// until the service is destroyed. Destroying it closes every stream, then stops the server.
// Errors: start() returns the server's io_error when it cannot listen.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/result.h"
#include "runtime/inspection/inspection_view.h"
#include "tools/observe/dashboard_options.h"

namespace drk::observe {

class DashboardService {
 public:
  using SystemSource = std::function<runtime::SystemView()>;

  static Result<std::unique_ptr<DashboardService>> start(const DashboardOptions& options, std::string run_dir,
                                                         SystemSource system);
  ~DashboardService();
  DashboardService(const DashboardService&) = delete;
  DashboardService& operator=(const DashboardService&) = delete;

  uint16_t port() const;

 private:
  struct State;
  DashboardService() = default;
  std::unique_ptr<State> state_;
};

}  // namespace drk::observe
