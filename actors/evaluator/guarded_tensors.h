// GuardedTensors: the CPU sandbox's out-of-bounds check, the host counterpart of running one call
// under compute-sanitizer memcheck. In the shared region a read past one tensor lands in the
// next and goes unseen; here each tensor of the call is copied into a mapping of its own, between
// two inaccessible (PROT_NONE) pages, with its last byte as close to the trailing page as a
// 64-byte aligned start allows (0 to 63 bytes short of it: none for the tasks' float32 shapes,
// whose sizes are multiples of 64 bytes). The leading page catches accesses before the start
// right away only for tensors of whole pages; others have up to a page of slack there.
//
// While a GuardedTensors lives, SIGSEGV and SIGBUS go to its handler. A fault inside a guard page
// is an access outside that tensor: the handler writes one line to standard error, e.g.
//   drk-sandbox: out of bounds: a read at byte 65792 of input 0, a tensor of 65536 bytes
// and ends the process with kOutOfBoundsExit (async-signal-safe: write and _exit only). Any
// other fault gets the default action, so the sandbox dies of the signal as it would unguarded.
// The Evaluator collects that output (SandboxProcess::finish) and parses it with
// parse_out_of_bounds().
//
// Ownership: RAII over the mappings; the destructor copies nothing back (nothing checks the
// outputs of a guarded call), unmaps them and restores the previous handlers. Thread-safety: one instance at a time per process (the handler reads a
// process-wide table); create and destroy it on the sandbox's main thread, around the call.
// Errors: create() fails with io_error when a mapping cannot be made.
#pragma once

#include <signal.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "drk_kernel.h"
#include "base/result.h"

namespace drk::evaluator {

// The sandbox's exit code after a fault in a guard page.
inline constexpr int kOutOfBoundsExit = 86;

class GuardedTensors {
 public:
  // One tensor to guard: its descriptor (data is repointed at the guarded copy) and its label
  // in reports ("input 0"; at most 63 characters).
  struct Entry {
    drk_tensor* tensor;
    std::string label;
  };

  // Copies each tensor's bytes into a guarded mapping and repoints its descriptor there.
  static Result<std::unique_ptr<GuardedTensors>> create(const std::vector<Entry>& entries);
  ~GuardedTensors();
  GuardedTensors(const GuardedTensors&) = delete;
  GuardedTensors& operator=(const GuardedTensors&) = delete;

 private:
  struct Mapping;
  GuardedTensors() = default;
  std::vector<Mapping> mappings_;
  struct sigaction previous_segv_ {};
  struct sigaction previous_bus_ {};
  bool handlers_installed_ = false;
};

// What the Evaluator reads from a guarded sandbox's output: the first out-of-bounds line ("" when
// there is none).
std::string parse_out_of_bounds(const std::string& output);

}  // namespace drk::evaluator
