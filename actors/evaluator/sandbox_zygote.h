// SandboxZygote: the Evaluator's handle on one zygote process (zygote_loop.h), which forks a
// fresh, confined sandbox per candidate, so that a candidate's code never shares a process with
// a later candidate, and a new sandbox costs a fork of a warm process rather than an exec that
// loads LibTorch again.
//
// start() launches `executable --zygote` (sandbox_launch.h: its own process group, no network,
// SIGKILL when the Evaluator dies) with one end of a SOCK_SEQPACKET socket pair. spawn() asks it
// for a sandbox and waits for the answer; wait_exit() for a sandbox's end, which the zygote
// reports after reaping it and killing whatever still ran as its user.
//
// Thread-safety: one owner thread (the engine's); shared by the SandboxProcess objects of that
// thread. Errors: peer_unavailable when the zygote is gone (the owner starts another), timeout,
// io_error for the rest, invalid_argument when the zygote refused the request (its reason). The
// destructor closes the socket, on which the zygote kills its sandboxes and exits, and reaps it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "actors/evaluator/sandbox_confinement.h"
#include "actors/evaluator/sandbox_exit.h"
#include "base/result.h"
#include "base/unique_fd.h"

namespace drk::evaluator {

struct SpawnRequest {
  std::string work_directory;
  int max_threads = 1;
  uint64_t gpu_memory_limit_bytes = 0;
  ConfinementLimits limits;
  int request_read = -1, reply_write = -1, region_fd = -1;  // become the sandbox's 3, 4 and 5
};

struct SpawnedSandbox {
  uint64_t id = 0;   // the request's, by which its exit is reported
  pid_t pid = -1;
  uid_t uid = 0;     // the user it runs as
  UniqueFd pidfd;    // absent where the kernel has no pidfd_open
};

class SandboxZygote {
 public:
  // `arguments`: for the program besides --zygote (SandboxOptions::program_arguments).
  static Result<std::unique_ptr<SandboxZygote>> start(const std::string& executable,
                                                      const std::vector<std::string>& arguments = {});
  ~SandboxZygote();
  SandboxZygote(const SandboxZygote&) = delete;
  SandboxZygote& operator=(const SandboxZygote&) = delete;

  Result<SpawnedSandbox> spawn(const SpawnRequest& request, std::chrono::milliseconds timeout);
  // The end of the sandbox of spawn `id`; nullopt when it was not reported within `timeout` (or
  // the zygote is gone: then its sandboxes died with it, by SIGKILL).
  std::optional<SandboxExit> wait_exit(uint64_t id, std::chrono::milliseconds timeout);
  // Its end will not be waited for: forgotten when reported.
  void forget(uint64_t id);

  bool alive() const { return pid_ > 0 && control_; }
  pid_t pid() const { return pid_; }
  // Processes found running as a sandbox's user after it ended, which the zygote killed.
  uint64_t leftover_processes_killed() const { return leftovers_; }

 private:
  SandboxZygote() = default;
  // Reads one event within `timeout_ms`: stores an exit, or an answer to spawn request `id`.
  Status read_event(int timeout_ms);
  void stop();

  pid_t pid_ = -1;
  UniqueFd control_;
  uint64_t next_id_ = 1;
  std::map<uint64_t, SandboxExit> exits_;
  std::map<uint64_t, bool> forgotten_;
  std::optional<Result<SpawnedSandbox>> answer_;  // to the spawn request in flight
  uint64_t answer_id_ = 0;
  uint64_t leftovers_ = 0;
};

}  // namespace drk::evaluator
