// BoundsCheck: out-of-bounds accesses of a correct candidate (`drk eval --sanitize`, and always
// for a result beyond the roofline or far beyond the task's best known speedup). One call of the
// candidate in a sandbox of its own whose tensors each have an allocation of their own, on fresh
// inputs, its outputs poisoned: under compute-sanitizer (memcheck, or initcheck: reads of device
// memory nothing wrote) on CUDA, between guard pages (guarded_tensors.h) on the CPU. What it
// finds is evidence (sanitizerErrors, initcheckErrors; sanitizerNote when it could not run); the
// candidate's warm sandbox is untouched.
//
// A Python candidate's separate sandbox loads it as its own sandbox does (the device's
// fill_load(), its load_inline modules beside it).
//
// Ownership: refers to the engine's options, session, shared region store and device, which
// outlive it.
// Thread-safety: the engine's thread only. Errors: none; every failure is a note in the evidence.
#pragma once

#include <string>

#include "actors/evaluator/engine/evaluation_device.h"
#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/engine/host_tensor_store.h"
#include "actors/evaluator/engine/sandbox_session.h"
#include "actors/evaluator/engine/separate_call.h"
#include "actors/evaluator/evaluation.h"
#include "kernels/compile/compiler.h"

namespace drk::evaluator {

class BoundsCheck {
 public:
  // `shared`: the shared region's store, where the separate call's tensors are staged.
  BoundsCheck(const EngineOptions& options, SandboxSession& session, HostTensorStore& shared,
              const EvaluationDevice& device)
      : options_(options), session_(session), shared_(shared), device_(device) {}

  // CUDA: one call under compute-sanitizer memcheck (initcheck: under initcheck).
  void sanitizer(EvaluationRun& run, const compile::CompiledCandidate& compiled, bool initcheck);
  // CPU: one call with every tensor between guard pages.
  void guarded_call(EvaluationRun& run, const compile::CompiledCandidate& compiled);

 private:
  std::optional<SeparateCallOutcome> call(EvaluationRun& run, const compile::CompiledCandidate& compiled,
                                          std::vector<std::string> launcher, std::string& note);

  const EngineOptions& options_;
  SandboxSession& session_;
  HostTensorStore& shared_;
  const EvaluationDevice& device_;
};

}  // namespace drk::evaluator
