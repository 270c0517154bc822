#include "runtime/supervisor.h"

#include <boost/asio/io_context.hpp>
#include <csignal>
#include <map>
#include <sstream>

#include "runtime/death_cause.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

namespace drk::runtime {
namespace {

using testing::RunDir;

// Children that exist only as pids: they die when the test says so or when signalled.
class FakeLauncher final : public ProcessLauncher {
 public:
  bool refuse_to_start = false;
  bool ignore_sigterm = false;
  std::vector<std::string> started;  // process names, in start order
  std::vector<std::pair<std::string, int>> signalled;

  Result<pid_t> start(const std::vector<std::string>& argv) override {
    if (refuse_to_start) return make_error(Errc::io_error, "no more processes");
    const std::string& process = argv.at(5);
    DRK_REQUIRE(argv.at(1) == "host");
    started.push_back(process);
    const pid_t pid = next_pid_++;
    running_[pid] = process;
    return pid;
  }

  void signal(pid_t pid, int signal_number) override {
    if (!running_.count(pid)) return;
    signalled.emplace_back(running_[pid], signal_number);
    if (signal_number == SIGTERM && ignore_sigterm) return;
    end(pid, signal_number == SIGTERM ? ExitStatus{0, 0} : ExitStatus{0, signal_number});
  }

  std::vector<std::pair<pid_t, ExitStatus>> reap() override { return std::exchange(ended_, {}); }

  void die(const std::string& process, ExitStatus status) {
    for (const auto& [pid, name] : running_) {
      if (name == process) {
        end(pid, status);
        return;
      }
    }
    DRK_FAIL("no running process " << process);
  }

  int starts_of(const std::string& process) const {
    return static_cast<int>(std::count(started.begin(), started.end(), process));
  }

 private:
  void end(pid_t pid, ExitStatus status) {
    ended_.emplace_back(pid, status);
    running_.erase(pid);
  }

  pid_t next_pid_ = 1000;
  std::map<pid_t, std::string> running_;
  std::vector<std::pair<pid_t, ExitStatus>> ended_;
};

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
    options.log = &log;
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
  std::ostringstream log;
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

}  // namespace
}  // namespace drk::runtime
