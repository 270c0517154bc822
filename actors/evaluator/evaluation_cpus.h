// The CPUs one CPU evaluation's sandbox runs on (sandbox_confinement.h pins it to them and
// refuses a change), as many as max_threads, so that a candidate's threads beyond max_threads
// share them and gain nothing.
//
// The reference is not pinned with it: a thread the sandbox kept running would slow the
// reference on a shared CPU (the timed side would look faster). On a loaded machine the pinned
// candidate cannot move away from a busy CPU while the reference can, which errs against the
// candidate, never for it.
//
// Thread-safety: any thread. Errors: none; where this process's CPUs cannot be read, an empty
// set (no pinning), and the Verifier's CPU-per-wall check still judges extra threads.
#pragma once

#include <cstdint>
#include <vector>

namespace drk::evaluator {

// `count` CPUs of those this process may run on (all of them when it may run on fewer). Calls
// in one process take the next CPUs in turn, starting at an offset drawn from its pid, so that
// the engines of one Evaluator, and Evaluators beside each other, spread over the machine.
std::vector<uint32_t> evaluation_cpus(int count);

}  // namespace drk::evaluator
