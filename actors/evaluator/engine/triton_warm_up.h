// The Triton warm-up: a Triton candidate's kernels compile when first called (Triton's JIT runs
// ptxas, and gcc for its launchers, and writes its cache), which the candidate's sandbox forbids
// (no new process, no file written). So before the candidate is loaded into its sandbox, it is
// called once in a sandbox of its own that may run compilers (SandboxOptions.allow_compilers:
// processes and file writes allowed, under its own user, in its own directory, with its network,
// CPU, memory and file-size limits) on inputs of their own draw, Triton's cache being that
// sandbox's triton-cache folder. The folder is then copied into the candidate's sandbox as its
// triton-cache, where its calls find every kernel compiled (docs/kernelbench.md, "Triton").
// A kernel that the warm-up call did not compile (a specialisation only later calls meet) would
// need a compiler in the candidate's sandbox: the filter ends it, and the result says so.
//
// Thread-safety: the engine's thread only. Errors: triton_warm_up() returns invalid_argument with
// what the warm-up call said when it failed (a Triton compile error, the candidate raising),
// unsupported when the sandbox would have no user of its own (the Evaluator is not root, or
// hardware metrics keep its user), and io_error when its sandbox cannot be had or its cache
// cannot be copied.
#pragma once

#include <filesystem>
#include <functional>
#include <cstdint>
#include <vector>
#include <string>

#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/engine/host_tensor_store.h"
#include "actors/evaluator/engine/sandbox_session.h"
#include "actors/evaluator/evaluation.h"
#include "base/result.h"
#include "base/temporary_directory.h"
#include "kernels/compile/compiler.h"

namespace drk::evaluator {

// Whether a Python candidate's source imports Triton (its kernels then compile at their first call).
bool uses_triton(const std::string& python_source);

// The Triton cache a warm-up left in `from`, copied into `to`: folders and regular files only, never
// following a link (which would make the Evaluator copy a file the candidate's user cannot read);
// invalid_argument past 20000 files or 512 MiB, io_error when a copy fails.
Status copy_triton_cache(const std::filesystem::path& from, const std::filesystem::path& to);

// Triton's cache groups (KEY/__grp__NAME.json) name their files by absolute path, the warm-up
// sandbox's: rewritten to the same files under `cache_root`, where the cache now is, else every
// lookup in the candidate's sandbox misses and Triton compiles again (which its filter refuses). A
// path whose file is not under `cache_root` is left as it is (the lookup then misses). io_error when
// a group cannot be read or written, invalid_argument when one is not Triton's JSON.
Status relocate_triton_groups(const std::filesystem::path& cache_root);

// A kernel Triton compiled, as its cache's metadata describes it (registers are known only once
// Triton loads it: not here).
struct TritonKernel {
  std::string name;  // as CUPTI names it
  uint32_t shared_bytes = 0;
};

// The kernels Triton compiled into the cache at `cache_root` (each KEY/NAME.json metadata beside
// its NAME.cubin), by name: the candidate's own kernels, for coverage and the decoy check. A
// C++-mangled name (`_Z...`) is left out, so that a Triton kernel named after a library's cannot
// make the library's work count as the candidate's. Unreadable metadata is skipped.
std::vector<TritonKernel> triton_kernels(const std::filesystem::path& cache_root);

// Adds `kernels` to `out`'s resources (after what nvcc's report put there) and to the run's own
// kernels.
void record_triton_kernels(const std::vector<TritonKernel>& kernels, EvaluationRun& run);

// The warm-up of `compiled` (a Python candidate on CUDA) for `run`; the folder of Triton's cache it
// left, owned by the caller. `fill_load`: the load request's Python part (the device's).
Result<TemporaryDirectory> triton_warm_up(const EngineOptions& options, const compile::CompiledCandidate& compiled,
                                          EvaluationRun& run, SandboxSession& session, HostTensorStore& shared,
                                          const std::function<void(msg::LoadRequest::Builder)>& fill_load);

}  // namespace drk::evaluator
