// Health checks: the monitor's decisions over plain values, and HealthChecks over a supervisor
// with fake children and an inspection board, both driven by a fake clock (no sleeping).
#include "runtime/supervision/heartbeat_monitor.h"

#include <boost/asio/io_context.hpp>
#include <csignal>
#include <optional>
#include <sstream>

#include "runtime/log.h"
#include "tests/doctest_drk.h"
#include "tests/runtime/fake_launcher.h"
#include "tests/support/run_dir.h"

namespace drk::runtime {
namespace {

using namespace std::chrono_literals;
using testing::FakeLauncher;
using testing::RunDir;

HealthSettings settings(bool kill_hung = false) {
  HealthSettings health;
  health.heartbeat = 100ms;
  health.missed_heartbeats = 5;
  health.hung_handler = 30s;
  health.kill_hung = kill_hung;
  return health;
}

ProcessHealth process(std::string name, std::chrono::milliseconds silent_for, bool supervised = true) {
  ProcessHealth health;
  health.name = std::move(name);
  health.incarnation = 7;
  health.supervised = supervised;
  health.silent_for = silent_for;
  health.reported = true;
  return health;
}

DRK_TEST_CASE("a starting process that has never reported gets start_timeout, then is killed with that cause") {
  HealthSettings slow_start = settings();
  slow_start.start_timeout = 2s;
  HeartbeatMonitor monitor(slow_start);
  ProcessHealth starting = process("a", 1500ms);
  starting.reported = false;
  DRK_CHECK(monitor.check({starting}).empty());  // past the silence limit, within start_timeout
  starting.silent_for = 2100ms;
  const auto actions = monitor.check({starting});
  DRK_REQUIRE(actions.size() == 1);
  DRK_CHECK(actions[0].kind == HealthAction::Kind::kill);
  DRK_CHECK(actions[0].text == "no first heartbeat within 2.1 s of its start (supervision.start_timeout_s)");
}

DRK_TEST_CASE("a process silent for more than missed_heartbeats periods is killed with that cause") {
  HeartbeatMonitor monitor(settings());
  DRK_CHECK(monitor.check({process("a", 500ms), process("head", 10s, false)}).empty());
  const auto actions = monitor.check({process("a", 520ms)});
  DRK_REQUIRE(actions.size() == 1);
  DRK_CHECK(actions[0].kind == HealthAction::Kind::kill);
  DRK_CHECK(actions[0].process == "a");
  DRK_CHECK(actions[0].incarnation == 7);
  DRK_CHECK(actions[0].text == "missed 5 heartbeats (no report for 0.5 s)");
}

DRK_TEST_CASE("a hung handler is reported once per call; with kill_hung its process is killed, never the head") {
  HeartbeatMonitor monitor(settings(true));
  ProcessHealth a = process("a", 100ms);
  a.handlers.push_back({"evaluator.0", "evalRequest", 29s, 12});
  DRK_CHECK(monitor.check({a}).empty());

  a.handlers[0].running_for = 31s;
  auto actions = monitor.check({a});
  DRK_REQUIRE(actions.size() == 2);
  DRK_CHECK(actions[0].kind == HealthAction::Kind::report);
  DRK_CHECK(actions[0].text == "actor evaluator.0: handler for evalRequest has run for 31 s (hung?)");
  DRK_CHECK(actions[1].kind == HealthAction::Kind::kill);
  DRK_CHECK(actions[1].text == "hung handler: evalRequest ran for 31 s");

  a.handlers[0].running_for = 40s;
  DRK_CHECK(monitor.check({a}).empty());  // the same call

  a.handlers[0].call = 13;  // the next call of the same kind hangs too
  a.handlers[0].running_for = 32s;
  DRK_CHECK(monitor.check({a}).size() == 2);

  ProcessHealth head = process("head", 0ms, false);
  head.handlers.push_back({"learner", "on_timer", 35s, 3});
  actions = monitor.check({head});
  DRK_REQUIRE(actions.size() == 1);
  DRK_CHECK(actions[0].kind == HealthAction::Kind::report);
  DRK_CHECK(actions[0].text == "actor learner: handler for on_timer has run for 35 s (hung?)");
}

DRK_TEST_CASE("without kill_hung a hung handler is only reported; a silent process only for its silence") {
  HeartbeatMonitor monitor(settings(false));
  ProcessHealth a = process("a", 0ms);
  a.handlers.push_back({"evaluator.0", "evalRequest", 31s, 1});
  const auto reported = monitor.check({a});
  DRK_REQUIRE(reported.size() == 1);
  DRK_CHECK(reported[0].kind == HealthAction::Kind::report);

  ProcessHealth b = process("b", 10s);
  b.handlers.push_back({"oracle", "evalResult", 45s, 1});
  const auto killed = monitor.check({b});
  DRK_REQUIRE(killed.size() == 1);
  DRK_CHECK(killed[0].text == "missed 5 heartbeats (no report for 10 s)");
}

DRK_TEST_CASE("the check period is half a heartbeat, within bounds; durations are cut to tenths") {
  HealthSettings health;
  health.heartbeat = 1000ms;
  DRK_CHECK(health.check_period() == 500ms);
  health.heartbeat = 4ms;
  DRK_CHECK(health.check_period() == 10ms);
  health.heartbeat = 10s;
  DRK_CHECK(health.check_period() == 1000ms);
  DRK_CHECK(format_health_seconds(599ms) == "0.5 s");
  DRK_CHECK(format_health_seconds(9999ms) == "9.9 s");
  DRK_CHECK(format_health_seconds(31900ms) == "31 s");
  SupervisionPolicy policy;
  DRK_CHECK(HealthSettings::of(policy).silence_limit() == 5000ms);
  DRK_CHECK(HealthSettings::of(policy).hung_handler == 30s);
}

// A supervisor of fake children, an inspection board and health checks on one fake clock.
struct Head {
  Head() {
    for (const char* name : {"a", "b"}) {
      ActorEntry actor;
      actor.name = name;
      actor.role = "worker";
      actor.process = name;
      topology.actors.push_back(actor);
    }
    topology.name = "health";
    topology.supervision.heartbeat_ms = 100;
    topology.supervision.missed_heartbeats = 5;
    topology.supervision.hung_handler_s = 0.5;
    topology.supervision.start_timeout_s = 0.5;
    SupervisorOptions options;
    options.executable = "drk";
    options.run_dir = dir.path().string();
    options.stop_grace = 0ms;
    options.clock = [this] { return steady(); };
    supervisor.emplace(io, topology, launcher, options);
    supervisor->start([](Status) {});
    board.emplace(topology, dir.path().string(), [this] { return kUnixStart + now.count(); });
    checks.emplace(io, *supervisor, *board, topology, [this] { return steady(); });
    publish();
  }

  std::chrono::steady_clock::time_point steady() const { return std::chrono::steady_clock::time_point{} + 1h + now; }
  void publish() {
    std::vector<ProcessView> processes;
    for (const ProcessRecord& record : supervisor->processes()) processes.push_back(process_view(record));
    board->update_processes(processes);
  }
  void report(const std::string& name, std::vector<ActorView> actors = {}) {
    const ProcessRecord& record = supervisor->processes()[name == "a" ? 0 : 1];
    board->update_host(HostView{name, record.incarnation, record.pid, std::move(actors)});
  }
  void settle() {
    supervisor->children_exited();
    for (int round = 0; round < 3; ++round) {
      io.restart();
      io.poll();
      supervisor->children_exited();
    }
    publish();
  }

  static constexpr int64_t kUnixStart = 1'700'000'000'000;
  RunDir dir;
  Topology topology;
  boost::asio::io_context io;
  FakeLauncher launcher;
  drk::log::Capture log{drk::log::Capture::Mode::instead};  // what the supervisor and the checks log
  std::chrono::milliseconds now{0};
  std::optional<Supervisor> supervisor;
  std::optional<InspectionBoard> board;
  std::optional<HealthChecks> checks;
};

DRK_TEST_CASE("the head kills a child that stopped reporting, with that cause, and restarts it") {
  Head head;
  head.checks->check_now();
  DRK_CHECK(head.launcher.signalled.empty());
  head.now = 400ms;
  head.report("a");
  head.now = 600ms;  // a reported 200 ms ago; b never did, and started 600 ms ago
  head.checks->check_now();
  DRK_CHECK(head.launcher.signalled == std::vector<std::pair<std::string, int>>{{"b", SIGKILL}});
  head.settle();
  DRK_CHECK(head.supervisor->processes()[1].last_cause ==
            "no first heartbeat within 0.6 s of its start (supervision.start_timeout_s)");
  DRK_CHECK(head.launcher.starts_of("b") == 2);
  DRK_CHECK_MESSAGE(head.log.str().find("process 'b' (pid 1001) died: no first heartbeat within 0.6 s of its start "
                                        "(supervision.start_timeout_s); restarting in 0 ms") != std::string::npos,
                    head.log.str());
  head.now = 1000ms;  // the new b started at 600 ms; a's report is 600 ms old
  head.report("b");
  head.checks->check_now();
  DRK_CHECK(head.launcher.signalled.back() == std::pair<std::string, int>{"a", SIGKILL});
}

DRK_TEST_CASE("the head reports a handler hung past hung_handler_s, counting the age of the report") {
  Head head;
  ActorView busy;
  busy.name = "a";
  busy.status = ActorStatus::running;
  busy.current_handler = "evalRequest";
  busy.current_handler_seconds = 0.4;
  busy.messages_handled = 3;
  head.now = 100ms;
  head.report("a", {busy});
  head.report("b");
  head.checks->check_now();
  DRK_CHECK(head.log.str().empty());
  head.now = 250ms;  // 0.4 s when reported + 0.15 s since
  head.checks->check_now();
  head.checks->check_now();
  DRK_CHECK(head.log.str() == "actor a: handler for evalRequest has run for 0.5 s (hung?)\n");
  DRK_CHECK(head.launcher.signalled.empty());  // kill_hung is off
}

}  // namespace
}  // namespace drk::runtime
