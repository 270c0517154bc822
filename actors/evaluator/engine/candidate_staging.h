// Candidate staging: what a sandbox loads, copied into its directory. The compiled object, and a
// Python candidate's load_inline modules (each under a name of its own; the loader only needs the
// module's suffix kept), named in the load request in source order (LoadRequest.python.extensions).
// Shared by the candidate's own sandbox (compile_and_load.h) and the separate sandboxes of one
// call (separate_call.h).
//
// Thread-safety: free functions. Errors: stage_candidate() returns the copy's io_error.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/result.h"
#include "kernels/compile/compiler.h"
#include "messages/sandbox.capnp.h"

namespace drk::evaluator {

struct StagedCandidate {
  std::string library;                                 // its path in the sandbox's directory
  std::vector<compile::PrebuiltExtension> extensions;  // the same, for its load_inline modules
};

// Copies `path` into the sandbox's directory as `name`; the copy's path.
using StageFile = std::function<Result<std::string>(const std::string& path, const std::string& name)>;

Result<StagedCandidate> stage_candidate(const compile::CompiledCandidate& compiled, const StageFile& stage);

// The staged object and its modules into `load` (after the device's fill_load(), which begins
// LoadRequest.python for Python candidates).
void fill_staged_load(const StagedCandidate& staged, int max_threads, msg::LoadRequest::Builder load);

}  // namespace drk::evaluator
