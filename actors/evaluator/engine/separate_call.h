// SeparateCall: one call of a candidate in a sandbox of its own, started for that call and ended
// after it, beside the candidate's warm sandbox, which it leaves untouched. Its tensors are laid
// out in the shared region for one buffer set, its inputs drawn fresh and its outputs poisoned;
// with separate_allocations each tensor gets an allocation of its own. The out-of-bounds check
// runs its call so (bounds_check.h, under compute-sanitizer or between guard pages), and the
// Triton warm-up (triton_warm_up.h, in a sandbox that may run compilers).
//
// Ownership: refers to the session and the shared store, which outlive the call. Thread-safety:
// the engine's thread only. Errors: none returned; nullopt, with the reason in `note`, when the
// sandbox cannot be had, and what the sandbox said (a refused load, a failed call) in `failure`.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "actors/evaluator/engine/evaluation_run.h"
#include "actors/evaluator/engine/host_tensor_store.h"
#include "actors/evaluator/engine/sandbox_session.h"
#include "actors/evaluator/sandbox_exit.h"
#include "actors/evaluator/sandbox_process.h"
#include "kernels/compile/compiler.h"

namespace drk::evaluator {

struct SeparateCallSpec {
  SandboxOptions sandbox;  // its program, limits and launcher
  int max_threads = 1;
  uint64_t input_seed = 0;  // the draw of its inputs
  std::chrono::milliseconds timeout{180000};  // per request
  // What the load request carries besides the object (EvaluationDevice::fill_load()).
  std::function<void(msg::LoadRequest::Builder)> fill_load;
  // After the sandbox ended, before its working directory goes: that directory, with what it left.
  std::function<void(const std::string&)> after_call;
};

struct SeparateCallOutcome {
  bool ran = false;     // loaded and called once
  std::string failure;  // why not, when the sandbox said
  std::string output;   // what the sandbox (or its launcher) printed
  SandboxExit exit;
};

std::optional<SeparateCallOutcome> call_separately(const SeparateCallSpec& spec, const compile::CompiledCandidate& compiled,
                                                   EvaluationRun& run, SandboxSession& session,
                                                   HostTensorStore& shared, std::string& note);

}  // namespace drk::evaluator
