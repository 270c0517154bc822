// CompileAndLoad: the first two steps of an evaluation.
//
// Compile (kernels/compile/compiler.h; cached by content) on the engine's CompilePool, which may
// already be compiling the candidate (compile_ahead()). A candidate that carries an object compiled
// where it was generated (Candidate.compiled) is not compiled when the object is verified
// (kernels/compile/compiled_artifact.h): it is filed into the cache and found there. The result's
// candidate leaves the object out; its `compiled.use` says `used`, or `ignored` with the reason in
// `compiled.note` (also logged), and the source was compiled.
//
// Load the compiled object into a sandbox no candidate has run in (sandbox_session.h), after what
// the device measures before any candidate's code shares a process with it. A Python candidate's
// load_inline extensions, built by the compile step, are copied beside it and named in the load
// request (candidate_staging.h). A Python candidate on CUDA that imports Triton is first called
// once in a sandbox that may run Triton's compilers (triton_warm_up.h); the Triton cache it left
// is copied beside the candidate, and the warm-up's time counts as compile time (compileMs).
//
// Outcomes (no compile, a crash or refusal at load) are fields of the result; a returned error is
// a fault (the compiler or the sandbox cannot be started at all).
// Ownership: refers to the engine's options, compile pool, session and device, which outlive it.
// Thread-safety: the engine's thread only (the pool is thread-safe itself).
#pragma once

#include <map>
#include <optional>
#include <string>

#include "actors/evaluator/engine/engine_clock.h"
#include "actors/evaluator/engine/evaluation_device.h"
#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/engine/host_tensor_store.h"
#include "actors/evaluator/engine/sandbox_session.h"
#include "actors/evaluator/evaluation.h"
#include "kernels/compile/compile_pool.h"

namespace drk::evaluator {

class CompileAndLoad {
 public:
  CompileAndLoad(const EngineOptions& options, compile::CompilePool& pool, SandboxSession& session,
                 EvaluationDevice& device, HostTensorStore& shared);

  // EvaluationEngine::compile_ahead(): files the object the candidate carries (when verified) and
  // submits the source; what became of the object waits for the candidate's record_artifact().
  void compile_ahead(msg::Candidate::Reader candidate);
  // What compile_ahead() made of the candidate's object, taken (nullopt when it did not see it).
  std::optional<Status> take_adoption(const std::string& candidate_id);
  // The candidate into `out` without the object it may carry (results travel on to the Verifier,
  // the Oracle and the archive), its artifact's `use` and `note` saying what became of it.
  void record_artifact(msg::Candidate::Reader candidate, std::optional<Status> adoption, msg::EvalResult::Builder out);
  // Compiles `source` (compiled, compileCached, compileMs, compileWaitMs since `started`); nullopt
  // when it does not compile (compileLog and errorText say why).
  Result<std::optional<compile::CompiledCandidate>> compile(const std::string& source, msg::EvalResult::Builder out,
                                                            Clock::time_point started);
  // Begins the candidate in a fresh sandbox and loads what compile() made of it (loadMs); false
  // when it did not load (sandbox and errorText say why).
  Result<bool> load(EvaluationRun& run, const compile::CompiledCandidate& compiled);

 private:
  // A Python candidate on CUDA that imports Triton: its warm-up (triton_warm_up.h), whose cache is
  // staged into the candidate's sandbox. invalid_argument or unsupported: it failed or cannot run
  // here (the result's reason).
  Status warm_up_triton(EvaluationRun& run, const compile::CompiledCandidate& compiled);

  const EngineOptions& options_;
  compile::CompilePool& pool_;
  SandboxSession& session_;
  EvaluationDevice& device_;
  HostTensorStore& shared_;
  // What became of the objects shipped with candidates compiled ahead, by candidate id, until
  // their evaluate() takes it.
  std::map<std::string, Status> adopted_;
};

}  // namespace drk::evaluator
