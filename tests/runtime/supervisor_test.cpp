#include "runtime/supervision/supervisor.h"

#include <boost/asio/io_context.hpp>
#include <csignal>
#include <deque>
#include <map>
#include <sstream>

#include "runtime/supervision/death_cause.h"
#include "runtime/log.h"
#include "tests/doctest_drk.h"
#include "tests/runtime/fake_launcher.h"
#include "tests/support/run_dir.h"

namespace drk::runtime {
namespace {

using testing::FakeLauncher;
using testing::RunDir;

Topology three_processes(RestartStrategy strategy, int max_restarts = 10) {
  Topology topology;
  topology.name = "test";
  topology.supervision.strategy = strategy;
  topology.supervision.max_restarts = max_restarts;
  topology.supervision.backoff_max_ms = 0;
  for (const char* name : {"a", "b", "c"}) {
    ActorEntry actor;
    actor.name = name;
    actor.role = "worker";
    actor.process = name;
    topology.actors.push_back(actor);
  }
  return topology;
}

struct Fixture {
  explicit Fixture(Topology topology_in) : topology(std::move(topology_in)) {
    SupervisorOptions options;
    options.executable = "drk";
    options.run_dir = dir.path().string();
    options.stop_grace = std::chrono::milliseconds{0};
    options.on_restarted = [this](const std::vector<std::string>& actors) {
      restarted.insert(restarted.end(), actors.begin(), actors.end());
    };
    supervisor.emplace(io, topology, launcher, options);
    supervisor->start([this](Status status) { outcome = status; });
  }

  // Delivers a death the way SIGCHLD does, and runs what became ready.
  void settle() {
    supervisor->children_exited();
    for (int round = 0; round < 3; ++round) {
      io.restart();
      io.poll();
      supervisor->children_exited();
    }
  }

  RunDir dir;
  Topology topology;
  boost::asio::io_context io;
  FakeLauncher launcher;
  drk::log::Capture log{drk::log::Capture::Mode::instead};  // what the supervisor logs
  std::vector<std::string> restarted;
  std::optional<Status> outcome;
  std::optional<Supervisor> supervisor;
};

DRK_TEST_CASE("one_for_one restarts only the dead process and reports its cause") {
  Fixture f(three_processes(RestartStrategy::one_for_one));
  DRK_CHECK(f.launcher.started == std::vector<std::string>{"a", "b", "c"});
  const uint64_t first_incarnation = f.supervisor->processes()[1].incarnation;
  f.launcher.die("b", ExitStatus{0, SIGKILL});
  f.settle();
  DRK_CHECK(f.launcher.starts_of("a") == 1);
  DRK_CHECK(f.launcher.starts_of("b") == 2);
  DRK_CHECK(f.launcher.starts_of("c") == 1);
  DRK_CHECK(f.supervisor->processes()[1].last_cause == "killed by SIGKILL");
  DRK_CHECK(f.supervisor->processes()[1].incarnation != first_incarnation);
  DRK_CHECK(f.restarted == std::vector<std::string>{"b"});
  DRK_CHECK_MESSAGE(
      f.log.str().find("supervisor: process 'b' (pid 1001) died: killed by SIGKILL; restarting in 0 ms "
                       "(restart 1 of at most 10 in 60 s)") != std::string::npos,
      f.log.str());
  DRK_CHECK_FALSE(f.outcome.has_value());
}

DRK_TEST_CASE("rest_for_one restarts the dead process and those after it, in order") {
  Fixture f(three_processes(RestartStrategy::rest_for_one));
  f.launcher.die("b", ExitStatus{70, 0});
  f.settle();
  DRK_CHECK(f.launcher.signalled == std::vector<std::pair<std::string, int>>{{"c", SIGTERM}});
  DRK_CHECK(f.launcher.started == std::vector<std::string>{"a", "b", "c", "b", "c"});
  DRK_CHECK(f.restarted == std::vector<std::string>{"b", "c"});
  DRK_CHECK(f.log.str().find("restarting with 'c' in 0 ms") != std::string::npos);
}

DRK_TEST_CASE("one_for_all restarts every process") {
  Fixture f(three_processes(RestartStrategy::one_for_all));
  f.launcher.die("c", ExitStatus{1, 0});
  f.settle();
  DRK_CHECK(f.launcher.started == std::vector<std::string>{"a", "b", "c", "a", "b", "c"});
}

DRK_TEST_CASE("the cause a dying process recorded is part of its death cause") {
  Fixture f(three_processes(RestartStrategy::one_for_one));
  write_death_cause(f.dir.path().string(), "a", "actor a: handler for heartbeat threw: boom");
  f.launcher.die("a", ExitStatus{70, 0});
  f.settle();
  DRK_CHECK(f.supervisor->processes()[0].last_cause ==
            "exited with code 70: actor a: handler for heartbeat threw: boom");
}

DRK_TEST_CASE("too many restarts stop the run with an error that names the process and its cause") {
  Fixture f(three_processes(RestartStrategy::one_for_one, 2));
  for (int death = 0; death < 3; ++death) {
    f.launcher.die("a", ExitStatus{0, SIGSEGV});
    f.settle();
  }
  DRK_REQUIRE(f.outcome.has_value());
  DRK_REQUIRE_FALSE(f.outcome->ok());
  const std::string& message = f.outcome->error().message;
  DRK_CHECK_MESSAGE(message.find("process 'a' keeps dying") != std::string::npos, message);
  DRK_CHECK(message.find("killed by SIGSEGV") != std::string::npos);
  DRK_CHECK(f.launcher.starts_of("a") == 3);
  for (const auto& process : f.supervisor->processes())
    DRK_CHECK(process.phase == ProcessRecord::Phase::down);
}

DRK_TEST_CASE("later restarts back off") {
  Topology topology = three_processes(RestartStrategy::one_for_one);
  topology.supervision.backoff_max_ms = 150;
  Fixture f(topology);
  f.launcher.die("a", ExitStatus{1, 0});
  f.settle();
  f.launcher.die("a", ExitStatus{1, 0});
  f.settle();
  DRK_CHECK_MESSAGE(f.log.str().find("restarting in 100 ms (restart 2 of") != std::string::npos, f.log.str());
}

DRK_TEST_CASE("a process that cannot start stops the run") {
  Fixture f(three_processes(RestartStrategy::one_for_one));
  f.launcher.refuse_to_start = true;
  f.launcher.die("b", ExitStatus{0, SIGKILL});
  f.settle();
  DRK_REQUIRE(f.outcome.has_value());
  DRK_REQUIRE_FALSE(f.outcome->ok());
  DRK_CHECK(f.outcome->error().message.find("cannot start process 'b': no more processes") !=
            std::string::npos);
}

DRK_TEST_CASE("stop terminates every child, killing those that ignore SIGTERM") {
  Fixture f(three_processes(RestartStrategy::one_for_one));
  f.launcher.ignore_sigterm = true;
  f.supervisor->stop();
  f.settle();
  DRK_REQUIRE(f.outcome.has_value());
  DRK_CHECK(f.outcome->ok());
  DRK_CHECK(
      f.launcher.signalled ==
      std::vector<std::pair<std::string, int>>{
          {"c", SIGTERM}, {"b", SIGTERM}, {"a", SIGTERM}, {"c", SIGKILL}, {"b", SIGKILL}, {"a", SIGKILL}});
  DRK_CHECK(f.launcher.starts_of("a") == 1);
}

DRK_TEST_CASE("a temporary process is never restarted, and its death is recorded") {
  Topology topology = three_processes(RestartStrategy::one_for_all);
  topology.actors[1].restart = ChildRestart::temporary;
  Fixture f(topology);
  f.launcher.die("b", ExitStatus{0, SIGKILL});
  f.settle();
  DRK_CHECK(f.launcher.started == std::vector<std::string>{"a", "b", "c"});
  DRK_CHECK(f.launcher.signalled.empty());  // not even under one_for_all: its siblings live on
  const ProcessRecord& b = f.supervisor->processes()[1];
  DRK_CHECK(b.phase == ProcessRecord::Phase::down);
  DRK_CHECK(b.finished);
  DRK_CHECK(b.last_cause == "killed by SIGKILL");
  DRK_CHECK(b.recent_causes == std::deque<std::string>{"killed by SIGKILL (not restarted: temporary)"});
  DRK_CHECK_MESSAGE(f.log.str() == "supervisor: process 'b' (pid 1001) died: killed by SIGKILL; not restarted: "
                                   "temporary\n",
                    f.log.str());
  DRK_CHECK(f.restarted.empty());
  DRK_CHECK_FALSE(f.outcome.has_value());
}

DRK_TEST_CASE("a transient process is done after exit code 0 and restarted after an abnormal end") {
  Topology topology = three_processes(RestartStrategy::one_for_one);
  topology.actors[0].restart = ChildRestart::transient;
  topology.actors[1].restart = ChildRestart::transient;
  Fixture f(topology);
  f.launcher.die("a", ExitStatus{0, 0});
  f.launcher.die("b", ExitStatus{3, 0});
  f.settle();
  DRK_CHECK(f.launcher.starts_of("a") == 1);
  DRK_CHECK(f.supervisor->processes()[0].finished);
  DRK_CHECK(f.launcher.starts_of("b") == 2);
  DRK_CHECK_MESSAGE(f.log.str().find("process 'a' (pid 1000) died: exited with code 0; not restarted: transient, "
                                     "and it ended normally") != std::string::npos,
                    f.log.str());
  DRK_CHECK(f.log.str().find("process 'b' (pid 1001) died: exited with code 3; restarting in 0 ms") !=
            std::string::npos);
  f.launcher.die("b", ExitStatus{0, SIGSEGV});
  f.settle();
  DRK_CHECK(f.launcher.starts_of("b") == 3);
}

DRK_TEST_CASE("a group restart stops a temporary member for good and starts a finished transient one again") {
  Topology topology = three_processes(RestartStrategy::one_for_all);
  topology.actors[1].restart = ChildRestart::transient;
  topology.actors[2].restart = ChildRestart::temporary;
  Fixture f(topology);
  f.launcher.die("b", ExitStatus{0, 0});  // done
  f.settle();
  f.launcher.die("a", ExitStatus{1, 0});
  f.settle();
  DRK_CHECK(f.launcher.started == std::vector<std::string>{"a", "b", "c", "a", "b"});
  DRK_CHECK(f.launcher.signalled == std::vector<std::pair<std::string, int>>{{"c", SIGTERM}});
  DRK_CHECK(f.restarted == std::vector<std::string>{"a", "b"});
  DRK_CHECK_MESSAGE(f.log.str().find("died: exited with code 1; restarting with 'b' in 0 ms (restart 1 of at most "
                                     "10 in 60 s); stopping 'c' for good (temporary)") != std::string::npos,
                    f.log.str());
  const ProcessRecord& c = f.supervisor->processes()[2];
  DRK_CHECK(c.finished);
  DRK_CHECK(c.recent_causes ==
            std::deque<std::string>{"stopped with its group, not restarted: temporary (exited with code 0)"});
}

DRK_TEST_CASE("kill() ends a running incarnation with the cause it gives, and the process is restarted") {
  Topology topology = three_processes(RestartStrategy::one_for_one);
  topology.actors[1].restart = ChildRestart::transient;  // a kill is an abnormal end
  Fixture f(topology);
  const uint64_t incarnation = f.supervisor->processes()[1].incarnation;
  DRK_CHECK_FALSE(f.supervisor->kill("b", incarnation + 1, "stale"));
  DRK_CHECK_FALSE(f.supervisor->kill("nobody", incarnation, "unknown"));
  DRK_REQUIRE(f.supervisor->kill("b", incarnation, "missed 5 heartbeats (no report for 5.2 s)"));
  DRK_CHECK(f.launcher.signalled == std::vector<std::pair<std::string, int>>{{"b", SIGKILL}});
  f.settle();
  const ProcessRecord& b = f.supervisor->processes()[1];
  DRK_CHECK(b.last_cause == "missed 5 heartbeats (no report for 5.2 s)");
  DRK_CHECK(b.incarnation != incarnation);
  DRK_CHECK(f.launcher.starts_of("b") == 2);
  DRK_CHECK_MESSAGE(f.log.str().find("process 'b' (pid 1001) died: missed 5 heartbeats (no report for 5.2 s); "
                                     "restarting in 0 ms") != std::string::npos,
                    f.log.str());
  DRK_CHECK_FALSE(f.supervisor->kill("b", incarnation, "the old incarnation is gone"));
}

}  // namespace
}  // namespace drk::runtime
