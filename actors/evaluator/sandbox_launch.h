// Launching a drk-sandbox executable (or a launcher such as compute-sanitizer in front of it):
// fork, set the child up, exec. Used for the zygote (sandbox_zygote.h) and for the sandboxes that
// cannot come from it (under a launcher, or with every tensor between guard pages).
//
// In the child, async-signal-safe calls only (the Evaluator has threads): SIGKILL when the
// Evaluator dies (PR_SET_PDEATHSIG), a process group of its own, `descriptors` moved to 3, 4, ...,
// standard input to /dev/null, standard output and error to `output_fd` (or /dev/null), every
// other descriptor closed; the network left (unshare(CLONE_NEWNET), or with a user namespace
// where only that is permitted; silently skipped where neither is); confined by `limits` in
// `work_directory` when `limits` is set (sandbox_confinement.h); then exec'd.
//
// Thread-safety: any thread. Errors: not_found when the executable is missing, io_error when
// the process cannot be made. A child that cannot be set up exits with status 124-127, or
// kConfinementFailedExit when its confinement failed.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "actors/evaluator/sandbox_confinement.h"
#include "base/result.h"

namespace drk::evaluator {

struct LaunchSpec {
  std::vector<std::string> argv;         // argv[0] is the program
  std::vector<int> descriptors;          // become 3, 4, ...
  int output_fd = -1;                    // standard output and error; -1: /dev/null
  std::optional<ProcessLimits> limits;   // none: not confined (the zygote)
  std::string work_directory;            // entered when limits are set
};

Result<pid_t> launch_sandbox(const LaunchSpec& spec);

}  // namespace drk::evaluator
