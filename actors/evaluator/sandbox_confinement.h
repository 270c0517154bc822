// Sandbox confinement: what keeps a candidate's process from reaching beyond itself, applied in
// the sandbox process before any candidate code runs (docs/verification.md, "Sandbox limits").
//
//   - its own user (when the harness runs as root): uid kSandboxUidBase + its pid, no
//     capabilities, no supplementary groups. It can then signal, trace or read no other process
//     (the harness, other sandboxes), write no file of the harness's user, and its tasks are
//     counted apart (RLIMIT_NPROC bounds its threads). When the harness is not root the sandbox
//     keeps the harness's user and the syscall filter alone does this work.
//   - CPUs: pinned to the evaluation's max_threads CPUs (sched_setaffinity, inherited by every
//     thread it starts, and the filter refuses a change), so that threads beyond max_threads share
//     those CPUs and gain nothing, however many the candidate starts.
//   - limits: RLIMIT_CPU, RLIMIT_CORE = 0, RLIMIT_FSIZE = 0 (no file can grow), RLIMIT_NOFILE,
//     RLIMIT_DATA and (CPU) RLIMIT_AS at what the process had mapped plus its memory budget.
//   - a syscall filter (seccomp, install_syscall_filter): no new process (fork, vfork, clone of
//     anything but a thread, exec), no tracing or reading of another process, no signal to another
//     process, no socket, no file created, written, renamed or removed, no shared anonymous
//     memory (which RLIMIT_DATA does not count), no namespace or mount change. A forbidden
//     process or tracing call kills the sandbox (SIGSYS: the Evaluator reports it); the others
//     fail with EPERM or EACCES, so libraries that try them carry on.
//
// With no new process possible, killing the sandbox kills everything its candidate started; the
// zygote (or, for a sandbox exec'd under a launcher, the Evaluator) still ends every process of a
// sandbox's own user after it exited (kill_processes_of_user), in case one got through.
//
// Thread-safety: the functions that change the calling process (confine_process,
// install_syscall_filter) run in the single-threaded sandbox child before it serves; the rest are
// free functions. Errors: io_error naming the step and errno.
#pragma once

#include <sched.h>
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace drk::evaluator {

// Users kSandboxUidBase + pid (pids stay below 2^22) belong to no one else on the machine.
constexpr uid_t kSandboxUidBase = 0x70000000;

// A sandbox's limits, as SandboxOptions state them: a memory budget on top of the harness's own
// mappings.
struct ConfinementLimits {
  uint64_t cpu_seconds = 3600;
  uint64_t memory_bytes = 0;   // the candidate's budget; 0: no limit
  bool address_space = true;   // RLIMIT_AS as well as RLIMIT_DATA (CUDA reserves far more than it uses)
  uint64_t max_open_files = 64;
  uint64_t max_tasks = 0;      // RLIMIT_NPROC of its own user (its threads); 0: not set
  bool own_user = true;        // a user of its own when the process is root
  uint64_t max_file_bytes = 0; // RLIMIT_FSIZE (a launcher such as compute-sanitizer writes files)
  std::vector<uint32_t> cpus;  // the CPUs it runs on; empty: any
};

// The same limits in absolute values, as setrlimit takes them.
struct ProcessLimits {
  uint64_t cpu_seconds = 3600;
  uint64_t data_bytes = 0;           // RLIMIT_DATA; 0: not set
  uint64_t address_space_bytes = 0;  // RLIMIT_AS; 0: not set
  uint64_t max_open_files = 64;
  uint64_t max_tasks = 0;            // RLIMIT_NPROC, set only with its own user
  bool own_user = true;
  uint64_t max_file_bytes = 0;
  bool pin_cpus = false;             // to `cpus`
  cpu_set_t cpus{};
};

// `limits` for a process that has `data_bytes` and `address_space_bytes` mapped already: the
// zygote's child, whose libraries (LibTorch's among them) are the harness's, not the candidate's
// budget; or, for a process about to exec, what its new image will map.
ProcessLimits absolute_limits(const ConfinementLimits& limits, uint64_t data_bytes, uint64_t address_space_bytes);
// What the calling process has mapped now: VmData and VmSize of /proc/self/status.
uint64_t mapped_data_bytes();
uint64_t mapped_address_space_bytes();

// The user a sandbox with process id `pid` runs as when it has one of its own.
inline uid_t sandbox_uid_for(pid_t pid) { return kSandboxUidBase + static_cast<uid_t>(pid); }

// Applies `limits` to the calling process and enters `work_directory`, which becomes its user's,
// and stores the uid it now runs as in `uid`. Async-signal-safe (for a child between fork and
// exec): returns nullptr on success, else the step that failed, with errno saying why.
const char* confine_process(const ProcessLimits& limits, const char* work_directory, uid_t* uid);

struct SyscallFilterOptions {
  pid_t self = 0;                // the only process it may signal
  bool allow_processes = false;  // a sandbox under a launcher, which itself starts processes
  // Opening existing files for reading and writing (O_RDWR, never creating, truncating or
  // appending): the NVIDIA driver's device files, which NVML and CUPTI's profiler open when
  // first used (CUDA sandboxes). With a user of its own no file of the harness's user is
  // writable to it; without one, such a file could be overwritten in place (docs/verification.md).
  bool allow_read_write_opens = false;
  // Shared anonymous mappings (mmap MAP_SHARED | MAP_ANONYMOUS), which CUPTI's range profiler
  // makes (cuptiRangeProfilerStart fails with CUPTI_ERROR_UNKNOWN without them: CUDA sandboxes).
  // Such memory is shared only with the process's children, and a sandbox without
  // allow_processes has none; with it, the mapping stays refused.
  bool allow_shared_anonymous_memory = false;
  // Creating, writing, renaming and removing files, and changing their modes (the Triton warm-up,
  // whose compilers write their output: triton_warm_up.h). What it may write is then bounded by
  // its user (its working directory, with a user of its own) and RLIMIT_FSIZE, not the filter.
  bool allow_file_writes = false;
};

// The sandbox's syscall filter (above).
Status install_syscall_filter(const SyscallFilterOptions& options);

// Kills every process of `uid` (never uid 0, nor the caller's own): a helper process takes that
// user and sends SIGKILL to all it can signal until none is left. Returns how many rounds found
// processes (0: none was running). Async-signal-safe only in the helper; call it from a normal
// thread.
Result<uint32_t> kill_processes_of_user(uid_t uid);

// The machine's memory (MemTotal), 0 when unknown.
uint64_t machine_memory_bytes();

// A sandbox's memory budget on this machine when it is one of `sandboxes` running at once:
// half of the machine's memory shared among them, at least 1 GiB.
uint64_t default_sandbox_memory_bytes(uint32_t sandboxes);

}  // namespace drk::evaluator
