// ProcessLauncher: the seam between the supervisor and the operating system's processes.
//
// The supervisor starts, signals and reaps children only through this interface, so tests can
// inject one that fails or whose children "die" on command. ForkExecLauncher is the real one:
// fork + exec with stdout/stderr inherited, each child in its own process group (a Ctrl-C at
// the terminal reaches only the head, which then stops the children in order) and with
// PR_SET_PDEATHSIG, so that children die with the head (the signal follows the forking thread:
// start children from a thread that lives as long as the run).
// With keep_warm_spare(), it also keeps one spare child of the same program ready
// (runtime/supervision/warm_spare.h): start() hands the spare its command line instead of forking, then
// starts the next spare. Spares are its own business: reap() never reports one that was not yet
// given orders, and the destructor kills it.
// Thread-safety: one thread (the supervisor's).
#pragma once

#include <sys/types.h>

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/unique_fd.h"
#include "base/result.h"

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
  // From now on keeps a spare started as `spare_argv` (e.g. {EXECUTABLE, "spare"}) for the
  // children whose argv[0] is spare_argv[0]; an empty spare_argv stops keeping one. The first
  // spare starts with the next start().
  void keep_warm_spare(std::vector<std::string> spare_argv);
  // The pid of the spare waiting for orders, or 0 (for tests and inspection).
  pid_t spare_pid() const { return spare_ ? spare_->pid : 0; }

  // Kills and reaps the children still running.
  ~ForkExecLauncher() override;
  ForkExecLauncher(const ForkExecLauncher&) = delete;
  ForkExecLauncher& operator=(const ForkExecLauncher&) = delete;

  Result<pid_t> start(const std::vector<std::string>& argv) override;
  void signal(pid_t pid, int signal_number) override;
  std::vector<std::pair<pid_t, ExitStatus>> reap() override;

 private:
  struct Spare {
    pid_t pid = 0;
    UniqueFd orders;  // our end of the socket pair that is the spare's standard input
  };

  // fork + exec of argv; the child's standard input becomes `stdin_fd` when it is not -1.
  Result<pid_t> spawn(const std::vector<std::string>& argv, int stdin_fd);
  Result<pid_t> hand_to_spare(const std::vector<std::string>& argv);
  void start_spare();
  void discard_spare();

  std::set<pid_t> children_;
  std::vector<std::string> spare_argv_;
  std::optional<Spare> spare_;
};

}  // namespace drk::runtime
