// The zygote's side of messages/sandbox.capnp's ZygoteSpawn protocol: drk-sandbox --zygote.
//
// The zygote is a sandbox process that never loads a candidate: exec'd and warm (LibTorch and,
// for drk-sandbox-cuda, the CUDA libraries loaded, nothing started: no thread, no CUDA context,
// since neither survives fork), it forks one sandbox per ZygoteSpawn. In the child: the
// request, reply and region descriptors are moved to 3, 4 and 5, everything else is closed, the
// child asks for SIGKILL when the zygote dies, enters its own process group and is confined
// (sandbox_confinement.h); then `become_sandbox` runs and its result is the child's exit status.
// The zygote answers `spawned` (with a pidfd of the child) or `failed`, and reports `exited` for
// every child it reaps, after killing whatever still runs as the child's own user.
//
// Thread-safety: single-threaded by design (it forks). Returns when the Evaluator's end of the
// control socket closes, after killing its children.
#pragma once

#include <cstdint>
#include <functional>

namespace drk::evaluator {

// A child that could not be confined exits with this status before it serves anything.
constexpr int kConfinementFailedExit = 97;

struct ZygoteChild {
  int max_threads = 1;
  uint64_t gpu_memory_limit_bytes = 0;
};

// What must happen around each fork besides the loop's own work: an embedded interpreter's
// PyOS_BeforeFork / PyOS_AfterFork_Parent / PyOS_AfterFork_Child (python_runtime.h). Empty: nothing.
struct ForkHooks {
  std::function<void()> before, after_in_parent, after_in_child;
};

int run_zygote(int control_fd, const std::function<int(const ZygoteChild&)>& become_sandbox,
               const ForkHooks& hooks = {});

}  // namespace drk::evaluator
