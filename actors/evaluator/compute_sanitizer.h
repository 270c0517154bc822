// compute-sanitizer, the CUDA toolkit's memory checker, as the out-of-bounds and
// uninitialised-read checks use it (docs/verification.md): where to find it, and what its memcheck
// and initcheck output says.
//
// Thread-safety: pure functions (find_compute_sanitizer reads the environment and the file
// system).
#pragma once

#include <string>

#include "base/result.h"

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

// initcheck (--tool initcheck) reports device code that reads global memory nothing wrote
// ("Uninitialized __global__ memory read of size 4 bytes"), and host API calls that copy such
// memory ("Host API memory access error ... Uninitialized access ... by cudaMemcpy source"). Only
// the first are the candidate's reads: the second are the harness copying back an output the
// candidate left unwritten, which the trials' poison already catches (outputs_unwritten).
struct InitcheckReport {
  bool finished = false;  // the ERROR SUMMARY line was printed
  int errors = 0;         // as the summary counts them, host API errors included
  int device_reads = 0;   // "Uninitialized __global__ memory read" errors
  std::string excerpt;    // the first of them: its lines, banner and host frames left out, " | "-joined
};

InitcheckReport parse_initcheck_output(const std::string& output);

}  // namespace drk::evaluator
