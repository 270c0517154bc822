// Candidates evaluated and judged (judged_evaluation.h) on several threads, each with an engine of
// its own (and so a sandbox of its own), for commands that evaluate many candidates
// (`drk bench kernelbench --jobs N`). One job evaluates the candidates one after the other, as
// `drk eval` would; more jobs time candidates and references beside each other's work, on a
// machine with the cores to spare. On cuda the jobs share one GPU (evaluator::share_one_gpu):
// they take turns to time, the rest of their work overlapping, and an evaluation whose tensors do
// not fit beside the others' waits for them instead of failing out of memory.
//
// Thread-safety: call from one thread; `done` runs on the evaluating threads, one call at a time
// (under a lock), so it may print and write without locks of its own. Ownership: the engines
// live for the call. Errors: an engine that cannot be made (before any candidate is evaluated);
// a candidate that cannot be evaluated is its `done` call's error, and the others go on.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "actors/evaluator/evaluation.h"
#include "base/result.h"
#include "messages/drk.capnp.h"

namespace drk::tools {

// Evaluates every input on min(jobs, inputs) threads and calls `done` with the input's index and
// its verdict, or the engine's error for it.
Status evaluate_in_parallel(const evaluator::EngineOptions& options, size_t jobs,
                            const std::vector<evaluator::CandidateInput>& inputs,
                            const std::function<void(size_t index, const Result<msg::Verdict::Reader>& verdict)>& done);

}  // namespace drk::tools
