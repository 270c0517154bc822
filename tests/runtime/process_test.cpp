// The runtime with real processes and sockets: drk_test_host runs a pinger and a ponger in
// processes of their own, the ponger dies mid-run (killed, stopped, hung), and the run must
// still answer everything; child types decide which ends are restarted; a stopping process
// drains its mailbox.
#include <unistd.h>

#include <cstdlib>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <functional>
#include <algorithm>
#include <map>

#include "runtime/supervision/process_launcher.h"
#include "runtime/supervision/warm_spare.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"

namespace drk::runtime {
namespace {

using testing::RunDir;

struct Finished {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// Runs drk_test_host with a bounded wait; on timeout the whole group is killed (its children
// die with it through PR_SET_PDEATHSIG).
Finished run_test_host(const RunDir& dir, const std::vector<std::string>& args, int timeout_ms = 30000) {
  std::vector<std::string> argv{DRK_TEST_HOST_PATH};
  argv.insert(argv.end(), args.begin(), args.end());
  testing::SpawnedProgram program(argv, dir.file("output.txt"));
  const bool ended = program.wait_for(timeout_ms);
  Finished finished;
  finished.output = dir.read("output.txt");
  DRK_CHECK_MESSAGE(ended, "drk_test_host did not finish in time:\n" << finished.output);
  finished.exit_code = ended ? program.exit_code() : -1;
  return finished;
}

// `supervision` adds keys to the supervision map: ", heartbeat_ms: 100".
std::string pingpong(const RunDir& dir, const std::string& ponger_params, int max_restarts = 10,
                     const std::string& supervision = "") {
  return dir.write("pingpong.yaml",
                   "name: pingpong\n"
                   "run_dir: " +
                       dir.file("run") +
                       "\n"
                       "supervision: {max_restarts: " +
                       std::to_string(max_restarts) + ", within_s: 60" + supervision +
                       "}\n"
                       "actors:\n"
                       "  - role: pinger\n"
                       "    process: own\n"
                       "    params: {requests: 20}\n"
                       "  - role: ponger\n"
                       "    process: own\n"
                       "    params: " +
                       ponger_params +
                       "\n"
                       "experiment: {steps: 1}\n");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::size_t occurrences(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size())) ++count;
  return count;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Waits until `done(output so far)` holds, at most `timeout`; polls the output file of a
// separate process, which has no event to wait on.
bool wait_for_output(const std::string& path, const std::function<bool(const std::string&)>& done,
                     std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < until) {
    if (done(read_file(path))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done(read_file(path));
}

DRK_TEST_CASE("a SIGKILLed process is restarted with its cause and every request is still answered") {
  RunDir dir;
  const Finished run = run_test_host(dir, {"run", pingpong(dir, "{fault: kill, at: 7}")});
  DRK_CHECK_MESSAGE(run.exit_code == 0, run.output);
  DRK_CHECK_MESSAGE(contains(run.output, "supervisor: process 'ponger' (pid "), run.output);
  DRK_CHECK_MESSAGE(
      contains(run.output, ") died: killed by SIGKILL; restarting in 0 ms (restart 1 of at most 10 in 60 s)"),
      run.output);
  DRK_CHECK_MESSAGE(contains(run.output, "step 1/1  policy v1"), run.output);
  DRK_CHECK_MESSAGE(contains(run.output, "summary: answered 20 of 20"), run.output);
}

DRK_TEST_CASE("a handler that throws ends its process with the exception as the death cause") {
  RunDir dir;
  const Finished run = run_test_host(dir, {"run", pingpong(dir, "{fault: throw, at: 3}")});
  DRK_CHECK_MESSAGE(run.exit_code == 0, run.output);
  DRK_CHECK_MESSAGE(contains(run.output,
                             "died: exited with code 70: actor ponger: handler for heartbeat threw: "
                             "injected fault; restarting"),
                    run.output);
  DRK_CHECK_MESSAGE(contains(run.output, "summary: answered 20 of 20"), run.output);
}

DRK_TEST_CASE("every process of a run logs to RUN_DIR/logs/PROCESS.log with the time, level, process and actor") {
  RunDir dir;
  ::setenv("DRK_LOG_LEVEL", "debug", 1);  // inherited by the run's processes: each actor's start and stop
  const Finished run = run_test_host(dir, {"run", pingpong(dir, "{fault: throw, at: 3}")});
  ::unsetenv("DRK_LOG_LEVEL");
  DRK_CHECK_MESSAGE(run.exit_code == 0, run.output);
  const std::string head = read_file(dir.file("run/logs/head.log"));
  const std::string pinger = read_file(dir.file("run/logs/pinger.log"));
  const std::string ponger = read_file(dir.file("run/logs/ponger.log"));
  // "[2026-01-05 12:34:56.789] [warning] [head] supervisor: process 'ponger' (pid 123) died: ..."
  DRK_CHECK_MESSAGE(head.rfind("[20", 0) == 0, head);
  DRK_CHECK_MESSAGE(contains(head, "] [warning] [head] supervisor: process 'ponger' (pid "), head);
  DRK_CHECK_MESSAGE(contains(head, "] [debug] [head] actor head (head): started\n"), head);
  DRK_CHECK_MESSAGE(contains(pinger, "] [debug] [pinger] actor pinger (pinger): started\n"), pinger);
  DRK_CHECK_MESSAGE(contains(pinger, "] [debug] [pinger] actor pinger: stopped\n"), pinger);
  // Appended across restarts: the incarnation that threw, then the one that finished.
  DRK_CHECK_MESSAGE(contains(ponger, "] [error] [ponger] actor ponger: handler for heartbeat threw: injected fault\n"),
                    ponger);
  DRK_CHECK_MESSAGE(occurrences(ponger, "actor ponger (ponger): started") == 2, ponger);
  // The console got the same lines: stderr is the run's, the files are each process's own.
  DRK_CHECK_MESSAGE(contains(run.output, "] [error] [ponger] actor ponger: handler for heartbeat threw"), run.output);
  DRK_CHECK_FALSE(contains(head, "[ponger]"));
  DRK_CHECK_FALSE(contains(pinger, "[ponger]"));
}

DRK_TEST_CASE("a process that keeps dying stops the run with its last cause") {
  RunDir dir;
  const Finished run = run_test_host(dir, {"run", pingpong(dir, "{fault: always_throw, at: 1}", 2)});
  DRK_CHECK(run.exit_code == 1);
  DRK_CHECK_MESSAGE(contains(run.output, "process 'ponger' keeps dying"), run.output);
  DRK_CHECK_MESSAGE(
      contains(run.output, "its last cause: exited with code 70: actor ponger: handler for heartbeat"),
      run.output);
  DRK_CHECK_FALSE(contains(run.output, "summary:"));
}

DRK_TEST_CASE("a topology error stops drk run before anything starts") {
  RunDir dir;
  const Finished run = run_test_host(dir, {"run", pingpong(dir, "{}"), "--set", "actors.ponger.count=0"});
  DRK_CHECK(run.exit_code == 1);
  DRK_CHECK_MESSAGE(
      contains(run.output, "--set actors.ponger.count=0: actors[1].count must be a positive integer"),
      run.output);
}

}  // namespace
}  // namespace drk::runtime

namespace drk::runtime {
namespace {

DRK_TEST_CASE("a role without the peer it needs stops drk run before anything starts, at its entry") {
  RunDir dir;
  const Finished run = run_test_host(dir, {"run", pingpong(dir, "{}"), "--set", "actors.ponger.role=sleeper"});
  DRK_CHECK(run.exit_code == 1);
  DRK_CHECK_MESSAGE(contains(run.output, "pingpong.yaml:5: a pinger needs a ponger in the topology (it sends its "
                                         "requests to a ponger): add one"),
                    run.output);
}

DRK_TEST_CASE("a SIGSTOPped process misses its heartbeats, is killed with that cause and restarted") {
  RunDir dir;
  const Finished run = run_test_host(
      dir, {"run", pingpong(dir, "{fault: stop, at: 7}", 10, ", heartbeat_ms: 100, missed_heartbeats: 5")});
  DRK_CHECK_MESSAGE(run.exit_code == 0, run.output);
  DRK_CHECK_MESSAGE(contains(run.output, ") died: missed 5 heartbeats (no report for "), run.output);
  DRK_CHECK_MESSAGE(contains(run.output, " s); restarting in 0 ms"), run.output);
  DRK_CHECK_MESSAGE(contains(run.output, "summary: answered 20 of 20"), run.output);
}

DRK_TEST_CASE("a hung handler is reported once and, with kill_hung, its process is killed and restarted") {
  RunDir dir;
  const Finished run = run_test_host(
      dir, {"run", pingpong(dir, "{fault: hang, at: 7}", 10,
                            ", heartbeat_ms: 100, hung_handler_s: 0.5, kill_hung: true")});
  DRK_CHECK_MESSAGE(run.exit_code == 0, run.output);
  DRK_CHECK_MESSAGE(occurrences(run.output, "actor ponger: handler for heartbeat has run for ") == 1, run.output);
  DRK_CHECK_MESSAGE(contains(run.output, ") died: hung handler: heartbeat ran for "), run.output);
  DRK_CHECK_MESSAGE(contains(run.output, " s; restarting in 0 ms"), run.output);
  DRK_CHECK_MESSAGE(contains(run.output, "summary: answered 20 of 20"), run.output);
}

DRK_TEST_CASE("without kill_hung a hung handler is only reported, once, and its process lives on") {
  RunDir dir;
  const Finished run = run_test_host(
      dir, {"run", pingpong(dir, "{fault: hang, at: 7, hang_ms: 1500}", 10,
                            ", heartbeat_ms: 100, missed_heartbeats: 20, hung_handler_s: 0.5")});
  DRK_CHECK_MESSAGE(run.exit_code == 0, run.output);
  DRK_CHECK_MESSAGE(occurrences(run.output, "actor ponger: handler for heartbeat has run for ") == 1, run.output);
  DRK_CHECK_MESSAGE(contains(run.output, " s (hung?)"), run.output);
  DRK_CHECK_MESSAGE(!contains(run.output, "died:"), run.output);
  DRK_CHECK_MESSAGE(contains(run.output, "summary: answered 20 of 20"), run.output);
}

DRK_TEST_CASE("child types: temporary is never restarted, transient only after an abnormal end") {
  RunDir dir;
  const std::string topology = dir.write("types.yaml",
                                         "name: types\n"
                                         "run_dir: " + dir.file("run") + "\n"
                                         "actors:\n"
                                         "  - {role: quitter, name: dropout, restart: temporary, params: {how: kill}}\n"
                                         "  - {role: quitter, name: done, restart: transient, params: {how: exit0}}\n"
                                         "  - {role: quitter, name: crasher, restart: transient,\n"
                                         "     params: {how: kill, once: true}}\n"
                                         "experiment: {steps: 1}\n");
  testing::SpawnedProgram program({DRK_TEST_HOST_PATH, "run", topology}, dir.file("output.txt"));
  const bool settled = wait_for_output(dir.file("output.txt"), [](const std::string& output) {
    return contains(output, "'dropout'") && contains(output, "'done'") &&
           occurrences(output, "quitter crasher: started") == 2;
  });
  ::kill(program.pid(), SIGTERM);
  DRK_REQUIRE(program.wait_for(20000));
  const std::string output = dir.read("output.txt");
  DRK_REQUIRE_MESSAGE(settled, output);
  DRK_CHECK_MESSAGE(program.exit_code() == 143, output);
  DRK_CHECK_MESSAGE(contains(output, "supervisor: process 'dropout' (pid "), output);
  DRK_CHECK_MESSAGE(contains(output, ") died: killed by SIGKILL; not restarted: temporary"), output);
  DRK_CHECK_MESSAGE(
      contains(output, ") died: exited with code 0; not restarted: transient, and it ended normally"), output);
  DRK_CHECK_MESSAGE(occurrences(output, "; restarting in 0 ms") == 1, output);
  DRK_CHECK_MESSAGE(occurrences(output, "quitter dropout: started") == 1, output);
  DRK_CHECK_MESSAGE(occurrences(output, "quitter done: started") == 1, output);
}

DRK_TEST_CASE("a stopping process first handles the messages already in its mailbox, for at most drain_ms") {
  RunDir dir;
  const std::string topology = dir.write("drain.yaml",
                                         "name: drain\n"
                                         "run_dir: " + dir.file("run") + "\n"
                                         "supervision: {drain_ms: 10000}\n"
                                         "actors:\n"
                                         "  - {role: drainer, params: {count: 200, handle_ms: 5}}\n"
                                         "experiment: {steps: 1}\n");
  const Finished run = run_test_host(dir, {"run", topology});
  DRK_CHECK_MESSAGE(run.exit_code == 0, run.output);
  DRK_CHECK_MESSAGE(read_file(dir.file("run/drained.txt")) == "handled 200\n", run.output);

  // A drain that cannot finish in drain_ms is cut: on_stop still runs, the process exits by itself.
  const Finished cut = run_test_host(dir, {"run", topology, "--set", "supervision.drain_ms=50"});
  DRK_CHECK_MESSAGE(cut.exit_code == 0, cut.output);
  const std::string drained = read_file(dir.file("run/drained.txt"));
  DRK_CHECK_MESSAGE((drained.rfind("handled ", 0) == 0 && drained != "handled 200\n"), drained);
}

}  // namespace
}  // namespace drk::runtime

namespace drk::runtime {
namespace {

// The launcher's children, reaped until every one of `pids` has ended (10 s at most: a hang
// fails the test): how each ended.
std::map<pid_t, ExitStatus> reap_all(ForkExecLauncher& launcher, const std::vector<pid_t>& pids) {
  std::map<pid_t, ExitStatus> ended;
  for (int attempt = 0; attempt < 1000; ++attempt) {
    for (const auto& [pid, status] : launcher.reap()) ended.emplace(pid, status);
    if (std::all_of(pids.begin(), pids.end(), [&](pid_t pid) { return ended.count(pid) > 0; })) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return ended;
}

DRK_TEST_CASE("a warm spare is handed the next command line, runs it, and another spare takes its place") {
  ForkExecLauncher launcher;
  launcher.keep_warm_spare(spare_argv(DRK_TEST_HOST_PATH, true));
  DRK_CHECK(launcher.spare_pid() == 0);  // the first spare starts with the first child
  auto first = launcher.start({DRK_TEST_HOST_PATH, "no-such-command"});
  DRK_REQUIRE(first.ok());
  const pid_t spare = launcher.spare_pid();
  DRK_REQUIRE(spare != 0);
  DRK_CHECK(spare != *first);

  auto second = launcher.start({DRK_TEST_HOST_PATH, "no-such-command"});
  DRK_REQUIRE(second.ok());
  DRK_CHECK(*second == spare);  // the spare became the child ...
  DRK_CHECK(launcher.spare_pid() != 0);
  DRK_CHECK(launcher.spare_pid() != spare);  // ... and a new spare waits
  const auto ended = reap_all(launcher, {*first, spare});
  DRK_REQUIRE(ended.count(spare) == 1);
  // 109: CLI11's code for the unexpected command drk_test_host was given: the orders were run.
  DRK_CHECK(ended.at(spare).exit_code == 109);
  DRK_CHECK(ended.count(*first) == 1);

  // Without spares, the waiting one is ended and never reported as a child.
  const pid_t waiting = launcher.spare_pid();
  launcher.keep_warm_spare({});
  DRK_CHECK(launcher.spare_pid() == 0);
  DRK_CHECK(::kill(waiting, 0) != 0);
  DRK_CHECK(launcher.reap().empty());
}

}  // namespace
}  // namespace drk::runtime
