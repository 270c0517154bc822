// SandboxProcess: one running sandbox (RAII), the process in which one candidate runs.
//
// A sandbox runs one candidate and then ends: no candidate's code runs in a process that will
// later run or time another candidate's (docs/verification.md, "One process per candidate").
// Two ways to have one:
//   - spawn(): forked by the engine's zygote (sandbox_zygote.h), a warm process that never runs a
//     candidate: cheap, since LibTorch is already loaded. The usual way.
//   - start(): launched afresh (sandbox_launch.h): for a sandbox under a launcher
//     (compute-sanitizer, for the out-of-bounds check), whose command line is the launcher's
//     argv followed by the sandbox's, and for the CPU's guard-page sandbox; their standard
//     output and error go to a pipe that finish() collects.
// Either way the sandbox speaks messages/sandbox.capnp on descriptors 3 (requests) and 4
// (replies) with the shared region on 5, in a working directory of its own, without network,
// confined as sandbox_confinement.h says: its own user when the Evaluator is root, limits,
// and (except under a launcher) a syscall filter that forbids new processes.
//
// call() sends one request and waits for its reply. When the deadline passes the sandbox is
// killed (SIGKILL) and the result is Errc::timeout; when the sandbox dies the result is
// Errc::sandbox_crashed and exit() tells how (signal or exit code). Either way the object is
// then dead for good: the owner makes a new one.
//
// finish() ends a sandbox in order: it closes the request pipe (the sandbox's serve loop returns),
// waits for the process to exit within a deadline (else kills it) and returns what the sandbox or
// its launcher printed.
//
// stage_library() copies a compiled candidate (or a module it loads: a Python candidate's
// load_inline extension) into the sandbox's working directory, where the sandbox's own user can
// read it, and returns the copy's path for the load request.
//
// Thread-safety: one owner thread. The destructor kills the sandbox; one that was launched is
// also reaped and every process left of its own user killed (the zygote does that for its own);
// the working directory is removed. SIGPIPE is ignored process-wide on first start (writes to a
// dead sandbox must fail with EPIPE, not end the Evaluator).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <capnp/message.h>
#include <kj/array.h>

#include "actors/evaluator/sandbox_confinement.h"
#include "actors/evaluator/sandbox_exit.h"
#include "actors/evaluator/sandbox_zygote.h"
#include "base/result.h"
#include "base/temporary_directory.h"
#include "base/unique_fd.h"
#include "base/result.h"
#include "base/unique_fd.h"

namespace drk::evaluator {

// The drk-sandbox next to the build's tools, or $DRK_SANDBOX when set.
std::string default_sandbox_executable();
// drk-sandbox-cuda of this build, or $DRK_SANDBOX_CUDA when set ("" in a build without CUDA).
std::string default_cuda_sandbox_executable();
// Whether the NVIDIA driver is here (/dev/nvidiactl): without it no CUDA sandbox can run.
bool nvidia_driver_present();

// The CPU time of all of process `pid`'s threads so far, from its process clock; nullopt when it
// cannot be read (gone, or not this user's). Exact only while every thread of it sleeps (see
// SandboxProcess::cpu_time_ns()).
std::optional<uint64_t> process_cpu_time_ns(pid_t pid);

struct SandboxOptions {
  std::string executable = default_sandbox_executable();
  int max_threads = 1;
  uint64_t cpu_seconds = 3600;
  // The candidate's memory budget beyond the harness's own mappings (RLIMIT_DATA, and on the CPU
  // RLIMIT_AS); 0: default_sandbox_memory_bytes(sandboxes_on_machine).
  uint64_t memory_bytes = 0;
  uint32_t sandboxes_on_machine = 2;
  bool limit_address_space = true;  // false on CUDA, which reserves far more than it uses
  uint64_t max_open_files = 64;
  // Its threads beyond max_threads (RLIMIT_NPROC, with a user of its own): the runtimes' own
  // (LibTorch's pool, CUDA's, CUPTI's).
  uint64_t extra_tasks = 64;
  bool own_user = true;             // a user of its own when the Evaluator is root
  // The CPUs it runs on (evaluation_cpus()); empty: any.
  std::vector<uint32_t> cpus;
  // drk-sandbox-cuda: device memory a candidate may hold (its allocations and its workspace)
  // before the sandbox answers memoryLimit and exits; 0: no limit (eval.gpu_memory_limit_mb).
  uint64_t gpu_memory_limit_bytes = 0;
  // Run under this program (its argv; empty: none), e.g. {compute-sanitizer, --tool, memcheck}.
  std::vector<std::string> launcher;
  // The out-of-bounds check: drk-sandbox-cuda puts every tensor in a device allocation of its
  // own, exactly its size, so that memcheck sees an access past the end of any of them (not just
  // past the region's); drk-sandbox puts each between guard pages (guarded_tensors.h).
  bool separate_allocations = false;
  // Arguments for the sandbox program itself (its zygote's too), e.g. drk-sandbox --python's.
  std::vector<std::string> program_arguments;
  // The Triton warm-up (engine/triton_warm_up.h): it may start processes (Triton's compilers) and
  // write files (drk-sandbox --allow-compilers), still under its own user, limits and network.
  bool allow_compilers = false;
};

// The limits a sandbox of `options` runs under.
ConfinementLimits confinement_limits(const SandboxOptions& options);

class SandboxProcess {
 public:
  // region_fd: the shared region's descriptor, inherited as descriptor 5.
  static Result<std::unique_ptr<SandboxProcess>> spawn(const std::shared_ptr<SandboxZygote>& zygote,
                                                       const SandboxOptions& options, int region_fd);
  static Result<std::unique_ptr<SandboxProcess>> start(const SandboxOptions& options, int region_fd);
  ~SandboxProcess();
  SandboxProcess(const SandboxProcess&) = delete;
  SandboxProcess& operator=(const SandboxProcess&) = delete;

  Result<kj::Array<capnp::word>> call(capnp::MessageBuilder& request, std::chrono::milliseconds timeout);
  // Ends the sandbox in order (above) and returns what its launcher printed ("" without one).
  std::string finish(std::chrono::milliseconds timeout);
  // `staged_name`: the copy's file name in that directory.
  Result<std::string> stage_library(const std::string& library_path, const std::string& staged_name = "candidate.so");
  // `directory` copied into that directory as `staged_name`, readable (not writable) by the
  // sandbox; the copy's path.
  Result<std::string> stage_directory(const std::string& directory, const std::string& staged_name);

  // The CPU time of all the sandbox's threads so far, read from its process clock here, where
  // the candidate cannot change it; nullopt once it is gone. The kernel keeps another process's
  // clock only as of each thread's last scheduler tick (4 ms here) while the thread runs, so the
  // reading is exact only while every thread of the sandbox sleeps: see wait_until_asleep().
  std::optional<uint64_t> cpu_time_ns() const;
  // Whether no thread of the sandbox is running now (gone counts as asleep).
  bool asleep() const;
  // Waits, up to `limit`, until no thread of the sandbox is running (its reply's tail, a pool's
  // spin); false when one still runs at the limit.
  bool wait_until_asleep(std::chrono::microseconds limit) const;

  bool alive() const { return pid_ > 0; }
  const SandboxExit& exit() const { return exit_; }
  pid_t pid() const { return pid_; }
  uid_t uid() const { return uid_; }
  const std::string& working_directory() const { return work_dir_.path(); }

 private:
  SandboxProcess() = default;
  // A process object with its working directory and pipes, not started: the child's ends travel
  // to the sandbox, the Evaluator's stay in the object.
  struct Unstarted {
    std::unique_ptr<SandboxProcess> process;
    UniqueFd request_read, reply_write;
  };
  static Result<Unstarted> prepare();
  void send_kill();
  // Waits up to `timeout` for the process's end; records it in exit_ and returns true when seen.
  bool wait_for_exit(std::chrono::milliseconds timeout);
  void kill_and_reap(bool timed_out);
  void reap_after_eof();

  pid_t pid_ = -1;
  uid_t uid_ = 0;
  UniqueFd pidfd_;
  UniqueFd request_fd_, reply_fd_;
  UniqueFd output_fd_;  // the launcher's stdout and stderr; none without a launcher
  TemporaryDirectory work_dir_;  // removed after the process is killed (the destructor's body)
  SandboxExit exit_;
  // Spawned: the zygote that made it (which reaps it) and its spawn id. Launched: nullptr.
  std::shared_ptr<SandboxZygote> zygote_;
  uint64_t spawn_id_ = 0;
};

}  // namespace drk::evaluator
