// How a sandbox process ended, and its description for people.
//
// Thread-safety: plain values.
#pragma once

#include <string>

namespace drk::evaluator {

struct SandboxExit {
  int signal = 0;         // the signal that ended it
  int exit_code = 0;      // its exit status when no signal ended it
  bool timed_out = false; // killed by us at a deadline
};

// "was killed by signal 11 (Segmentation fault)"; "made a system call the sandbox forbids (SIGSYS)".
std::string describe_exit(const SandboxExit& exit);

}  // namespace drk::evaluator
