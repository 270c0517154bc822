// The library-call table that drk-sandbox gives candidates (drk_context.lib): reference
// operations computed with LibTorch, the same library the Evaluator's reference uses. Every call
// is counted (library-call accounting: the Verifier and the coverage measure read the count).
//
// Thread-safety: the table's functions may be called from the candidate's threads; the counter
// is atomic. set_library_threads() is for the sandbox's main thread only.
#pragma once

#include <cstdint>

#include "drk_kernel.h"

namespace drk::evaluator {

const drk_library* sandbox_library();
uint64_t library_calls();               // calls since the sandbox started
void set_library_threads(int threads);  // LibTorch intra-op threads

}  // namespace drk::evaluator
