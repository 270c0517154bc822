// One candidate evaluated by the evaluation engine and judged by the Verifier, as the Evaluator
// and the Verifier actors would: what `drk eval` prints and `drk bench kernelbench` records. Both
// commands evaluate through these functions, so they judge a candidate alike.
//
// Thread-safety: an engine serves one thread at a time (actors/evaluator/evaluation.h); each
// function is otherwise free of shared state. Errors: make_engine returns the task catalog's
// (a malformed task file) or the engine's (a device this build cannot run); evaluate_and_judge
// the engine's, for a request that cannot be evaluated at all (an unknown task, a KernelBench
// problem whose reference cannot run). A candidate that does not compile, crashes or is wrong is a
// verdict, not an error.
#pragma once

#include <memory>

#include "actors/evaluator/evaluation.h"
#include "base/result.h"
#include "messages/drk.capnp.h"

namespace drk::tools {

// An engine over the task catalog of the source tree (kernels::TaskCatalog::default_directory()).
Result<std::unique_ptr<evaluator::EvaluationEngine>> make_engine(const evaluator::EngineOptions& options);

// Evaluates `input` and fills `verdict` with the Verifier's verdict, which holds the result.
Status evaluate_and_judge(evaluator::EvaluationEngine& engine, const evaluator::CandidateInput& input,
                          msg::Verdict::Builder verdict);

// How the sandbox ended, in words: "ok", "crashed", "timed out", "failed to load", "returned an error".
const char* sandbox_outcome_name(msg::SandboxOutcome outcome);

}  // namespace drk::tools
