// SandboxProcess: one running `drk-sandbox` (RAII), the process in which candidates run.
//
// start() forks and immediately execs drk-sandbox (never fork-only: pitfalls.md #5). Between
// fork and exec the child (async-signal-safe calls only) joins its own process group, asks for
// SIGKILL when the Evaluator dies (PR_SET_PDEATHSIG), moves its pipes to descriptors 3 and 4 and
// the shared region to 5, closes every other descriptor, enters a private temporary working
// directory, leaves the network (unshare(CLONE_NEWNET), or with a user namespace; silently
// skipped where neither is permitted) and sets its limits: RLIMIT_CPU, RLIMIT_AS (when not 0),
// RLIMIT_FSIZE = 0 (no file can grow), RLIMIT_NOFILE, RLIMIT_CORE = 0.
//
// call() sends one request and waits for its reply. When the deadline passes the whole process
// group is killed (SIGKILL) and the result is Errc::timeout; when the sandbox dies the result is
// Errc::sandbox_crashed and exit() tells how (signal or exit code). Either way the object is
// then dead for good: the owner makes a new one.
//
// Under a launcher (SandboxOptions::launcher: compute-sanitizer, for the out-of-bounds check) the
// launcher is what is exec'd, with the sandbox's command line after its own arguments; its
// standard output and error go to a pipe that finish() collects. The launcher writes files and
// opens descriptors of its own, so there RLIMIT_FSIZE is 1 GiB and RLIMIT_NOFILE 4096; the rest
// of the confinement is the same.
//
// With separate_allocations (the out-of-bounds check's sandbox, with or without a launcher) the
// standard output and error go to that pipe too: the CPU sandbox reports a fault in a guard page
// there (guarded_tensors.h).
//
// finish() ends a sandbox in order: it closes the request pipe (the sandbox's serve loop returns),
// waits for the process to exit within a deadline (else kills it) and returns what the sandbox or
// its launcher printed.
//
// Thread-safety: one owner thread. The destructor kills the process group, reaps it and removes
// the working directory. SIGPIPE is ignored process-wide on first start (writes to a dead
// sandbox must fail with EPIPE, not end the Evaluator).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <capnp/message.h>
#include <kj/array.h>

#include "runtime/result.h"

namespace drk::evaluator {

// The drk-sandbox next to the build's tools, or $DRK_SANDBOX when set.
std::string default_sandbox_executable();
// drk-sandbox-cuda of this build, or $DRK_SANDBOX_CUDA when set ("" in a build without CUDA).
std::string default_cuda_sandbox_executable();
// Whether the NVIDIA driver is here (/dev/nvidiactl): without it no CUDA sandbox can run.
bool nvidia_driver_present();

struct SandboxOptions {
  std::string executable = default_sandbox_executable();
  int max_threads = 1;
  uint64_t address_space_bytes = 32ull << 30;  // 0: no limit (CUDA needs none)
  uint64_t cpu_seconds = 3600;                 // the warm sandbox is replaced when it runs out
  uint64_t max_open_files = 64;
  // drk-sandbox-cuda: device memory a candidate may hold (its allocations and its workspace)
  // before the sandbox answers memoryLimit and exits; 0: no limit (eval.gpu_memory_limit_mb).
  uint64_t gpu_memory_limit_bytes = 0;
  // Run under this program (its argv; empty: none), e.g. {compute-sanitizer, --tool, memcheck}.
  std::vector<std::string> launcher;
  // The out-of-bounds check: drk-sandbox-cuda puts every tensor in a device allocation of its
  // own, exactly its size, so that memcheck sees an access past the end of any of them (not just
  // past the region's); drk-sandbox puts each between guard pages (guarded_tensors.h).
  bool separate_allocations = false;
};

struct SandboxExit {
  int signal = 0;         // the signal that ended it
  int exit_code = 0;      // its exit status when no signal ended it
  bool timed_out = false; // killed by us at a deadline
};

class SandboxProcess {
 public:
  // region_fd: the shared region's descriptor, inherited as descriptor 5.
  static Result<std::unique_ptr<SandboxProcess>> start(const SandboxOptions& options, int region_fd);
  ~SandboxProcess();
  SandboxProcess(const SandboxProcess&) = delete;
  SandboxProcess& operator=(const SandboxProcess&) = delete;

  Result<kj::Array<capnp::word>> call(capnp::MessageBuilder& request, std::chrono::milliseconds timeout);
  // Ends the sandbox in order (above) and returns what its launcher printed ("" without one).
  std::string finish(std::chrono::milliseconds timeout);

  bool alive() const { return pid_ > 0; }
  const SandboxExit& exit() const { return exit_; }
  pid_t pid() const { return pid_; }
  const std::string& working_directory() const { return work_dir_; }

 private:
  SandboxProcess() = default;
  void kill_and_reap(bool timed_out);
  void reap_after_eof();

  pid_t pid_ = -1;
  int request_fd_ = -1;
  int reply_fd_ = -1;
  int output_fd_ = -1;  // the launcher's stdout and stderr; -1 without a launcher
  std::string work_dir_;
  SandboxExit exit_;
};

std::string describe_exit(const SandboxExit& exit);  // "was killed by signal 11 (Segmentation fault)"

}  // namespace drk::evaluator
