// The runtime with real processes and sockets: drk_test_host runs a pinger and a ponger in
// processes of their own, the ponger dies mid-run, and the run must still answer everything.
#include <unistd.h>

#include <csignal>
#include <string>
#include <vector>

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

std::string pingpong(const RunDir& dir, const std::string& ponger_params, int max_restarts = 10) {
  return dir.write("pingpong.yaml",
                   "name: pingpong\n"
                   "run_dir: " +
                       dir.file("run") +
                       "\n"
                       "supervision: {max_restarts: " +
                       std::to_string(max_restarts) +
                       ", within_s: 60}\n"
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
