// ProcessLauncher: the seam between the supervisor and the operating system's processes.
//
// The supervisor starts, signals and reaps children only through this interface, so tests can
// inject one that fails or whose children "die" on command. ForkExecLauncher is the real one:
// fork + exec with stdout/stderr inherited, each child in its own process group (a Ctrl-C at
// the terminal reaches only the head, which then stops the children in order) and with
// PR_SET_PDEATHSIG, so that children die with the head (the signal follows the forking thread:
// start children from a thread that lives as long as the run).
// Thread-safety: one thread (the supervisor's).
#pragma once

#include <sys/types.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "runtime/result.h"

namespace drk::runtime {

struct ExitStatus {
  int exit_code = 0;  // meaningful when signal == 0
  int signal = 0;     // the signal that killed it, 0 when it exited

  // "exited with code 70" | "killed by SIGKILL"
  std::string describe() const;
  static ExitStatus from_wait_status(int status);
};

class ProcessLauncher {
 public:
  virtual ~ProcessLauncher() = default;
  // Starts argv[0] with argv. Errors: io_error when the process cannot be created.
  virtual Result<pid_t> start(const std::vector<std::string>& argv) = 0;
  virtual void signal(pid_t pid, int signal_number) = 0;
  // The children started here that have ended since the last call; never blocks.
  virtual std::vector<std::pair<pid_t, ExitStatus>> reap() = 0;
};

class ForkExecLauncher final : public ProcessLauncher {
 public:
  ForkExecLauncher() = default;
  // Kills and reaps the children still running.
  ~ForkExecLauncher() override;
  ForkExecLauncher(const ForkExecLauncher&) = delete;
  ForkExecLauncher& operator=(const ForkExecLauncher&) = delete;

  Result<pid_t> start(const std::vector<std::string>& argv) override;
  void signal(pid_t pid, int signal_number) override;
  std::vector<std::pair<pid_t, ExitStatus>> reap() override;

 private:
  std::set<pid_t> children_;
};

}  // namespace drk::runtime
