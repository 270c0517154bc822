// CommandRunner: the seam through which the Compiler runs short-lived commands to completion (the
// host compiler, nvcc). Tests inject a runner that fails, hangs or returns canned output.
//
// run() starts argv[0] (looked up in PATH) in a new process group with stdin from /dev/null and
// stdout and stderr captured together (at most max_output bytes are kept), waits until it exits
// or `timeout` passes, and on timeout kills the whole group (SIGKILL) so that compiler
// subprocesses die too.
//
// Thread-safety: the system runner is stateless; run() may be called from several threads.
// Errors: io_error when the program cannot be started. A program that fails is not an error:
// its exit code, signal and output are the value.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"

namespace drk::compile {

struct CommandRun {
  int exit_code = -1;      // valid when signal == 0 and !timed_out
  int signal = 0;          // the signal that ended it, 0 if it exited
  bool timed_out = false;  // killed at the deadline
  std::string output;      // stdout and stderr, interleaved as written
  bool succeeded() const { return !timed_out && signal == 0 && exit_code == 0; }
};

class CommandRunner {
 public:
  virtual ~CommandRunner() = default;
  virtual Result<CommandRun> run(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) = 0;
};

// Launches real processes (posix_spawnp).
std::shared_ptr<CommandRunner> system_command_runner(size_t max_output = 64 * 1024);

}  // namespace drk::compile
