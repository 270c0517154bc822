// compute-sanitizer, the CUDA toolkit's memory checker, as the out-of-bounds check uses it
// (docs/verification.md): where to find it, and what its memcheck output says.
//
// Thread-safety: pure functions (find_compute_sanitizer reads the environment and the file
// system).
#pragma once

#include <string>

#include "runtime/result.h"

namespace drk::evaluator {

// The exit status compute-sanitizer is asked to give when it found errors (--error-exitcode).
inline constexpr int kSanitizerErrorExit = 86;

// $DRK_COMPUTE_SANITIZER, else the toolkit's (/usr/local/cuda/bin, /usr/local/cuda/compute-sanitizer),
// else the first on PATH; not_found names where it looked and how to point at one.
Result<std::string> find_compute_sanitizer();

struct MemcheckReport {
  bool finished = false;  // the ERROR SUMMARY line was printed: the run ended in order
  int errors = 0;         // as the summary counts them
  std::string excerpt;    // the first error: its lines, banner and host frames left out, " | "-joined
};

MemcheckReport parse_memcheck_output(const std::string& output);

}  // namespace drk::evaluator
