// Health checks of the processes the head supervises: missed heartbeats and hung handlers
// (docs/topology.md, Supervision).
//
// Every actor host reports to the head once per supervision.heartbeat_ms
// (inspection_reporter.h); the report is its heartbeat.
// - A supervised process whose host has not reported for missed_heartbeats * heartbeat_ms
//   (since its last report, or since it started while it has not reported yet) is wedged as a
//   whole: stopped (SIGSTOP), deadlocked so that its reporter thread cannot run, or stuck before
//   its actors start. It is killed with the death cause "missed N heartbeats (no report for
//   X s)" (Supervisor::kill), and the supervisor restarts it per its type.
// - A handler that has run hung_handler_s or longer (as its host last reported it, plus the age
//   of that report) is reported once per handler call: "actor X: handler for KIND has run for
//   N s (hung?)". With kill_hung its process is also killed, with the cause "hung handler: KIND
//   ran for N s". The head's own process is only reported on: nothing restarts the head.
//
// HeartbeatMonitor is the decision alone, over plain values: no processes, sockets or clocks.
// HealthChecks runs it on the head's io_context every check period over the supervisor's records
// and the inspection board, with the steady clock as a seam; the head creates one and calls
// start() once the supervisor has started.
//
// Thread-safety: HeartbeatMonitor is a plain value for one thread. HealthChecks runs on the
// io_context's thread, like the Supervisor it drives; it must be destroyed before the
// supervisor and the board, and before the io_context.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/inspection/inspection_board.h"
#include "runtime/supervision/supervisor.h"
#include "runtime/topology/topology.h"

namespace drk::runtime {

struct HealthSettings {
  std::chrono::milliseconds heartbeat{1000};
  int missed_heartbeats = 5;
  std::chrono::milliseconds hung_handler{30000};
  bool kill_hung = false;
  // Before its first report a process is starting (loading libraries, on a loaded machine):
  // it is given this long instead of the silence limit.
  std::chrono::milliseconds start_timeout{60000};

  static HealthSettings of(const SupervisionPolicy& policy);
  // The silence after which a process is killed.
  std::chrono::milliseconds silence_limit() const { return heartbeat * missed_heartbeats; }
  // How often HealthChecks looks: half a heartbeat, from 10 ms to 1 s.
  std::chrono::milliseconds check_period() const;
};

// A handler running in a process, as its host last reported it.
struct RunningHandler {
  std::string actor;
  std::string kind;                      // "evalRequest", "on_timer", "on_start", ...
  std::chrono::milliseconds running_for{0};  // up to now
  uint64_t call = 0;  // which call of the actor's incarnation: the handlers that ended before it
};

// One process at one moment.
struct ProcessHealth {
  std::string name;
  uint64_t incarnation = 0;
  bool supervised = true;                   // false: the head's own process (never killed)
  std::chrono::milliseconds silent_for{0};  // since its last report, or since it started
  bool reported = false;                    // this incarnation has reported at least once
  std::vector<RunningHandler> handlers;
};

struct HealthAction {
  enum class Kind { kill, report };
  Kind kind = Kind::report;
  std::string process;
  uint64_t incarnation = 0;
  std::string text;  // kill: the death cause; report: the line to log
};

class HeartbeatMonitor {
 public:
  explicit HeartbeatMonitor(HealthSettings settings) : settings_(settings) {}

  // What to do now. A hung handler is reported by the first check that sees it over the limit
  // and not again while the same call runs.
  std::vector<HealthAction> check(const std::vector<ProcessHealth>& processes);

  const HealthSettings& settings() const { return settings_; }

 private:
  HealthSettings settings_;
  // (process, incarnation, actor, call, kind) of the hung calls reported and still running.
  std::set<std::tuple<std::string, uint64_t, std::string, uint64_t, std::string>> reported_;
};

// "5.2 s" below ten seconds, "31 s" from there (cut, not rounded): how health lines and causes
// write a duration.
std::string format_health_seconds(std::chrono::milliseconds duration);

class HealthChecks {
 public:
  using Clock = std::chrono::steady_clock;

  // The settings come from topology.supervision; `clock` must be the supervisor's clock.
  HealthChecks(boost::asio::io_context& io, Supervisor& supervisor, const InspectionBoard& board,
               const Topology& topology, std::function<Clock::time_point()> clock = Clock::now);
  HealthChecks(const HealthChecks&) = delete;
  HealthChecks& operator=(const HealthChecks&) = delete;

  // Checks now and then every check period, until destroyed.
  void start();
  // One check: kills and reports per the monitor.
  void check_now();

 private:
  std::vector<ProcessHealth> sample() const;
  void schedule();

  Supervisor& supervisor_;
  const InspectionBoard& board_;
  std::function<Clock::time_point()> clock_;
  HeartbeatMonitor monitor_;
  boost::asio::steady_timer timer_;
};

}  // namespace drk::runtime
