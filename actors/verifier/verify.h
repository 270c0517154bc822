// verify(): decides whether an evaluation result is honest, from the evidence the Evaluator
// collected. The Verifier never runs candidates itself; it reads the result and lists every
// failed check with its evidence, so that the Generator learns exactly what was wrong.
//
// Checks (reason codes, stable: the Archivist stores them and feedback names them):
//   sandbox_crashed      the sandbox died during the evaluation (signal or exit)
//   sandbox_timeout      the candidate missed its deadline and was killed
//   outputs_unwritten    an output still held the poison after a call
//   inputs_mutated       an input differed from its pristine copy after a call
//   candidate_error      the candidate's entry point returned a non-zero status
//   failed_to_load       the shared object did not load or lacks drk_kernel
//   timer_mismatch       the harness's wall clock disagrees with what the sandbox reported
// A result that failed to compile, or that is merely incorrect (NaN included), is not
// dishonest: it fails no check here (the Oracle's reward handles it).
//
// Thread-safety: pure function.
#pragma once

#include "messages/drk.capnp.h"

namespace drk::verifier {

void verify(msg::EvalResult::Reader result, msg::Verdict::Builder out);

}  // namespace drk::verifier
