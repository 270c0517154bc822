// The result of one gateway task as KernelGYM's clients read it (docs/gateway.md): compiled,
// correctness, decoy_kernel, reference_runtime and kernel_runtime (ms), speedup, status,
// error_code, processing_time (s), and beyond KernelGYM the reward of our Oracle's formula
// (actors/oracle/reward.h: the value, the formula and its weights) and a `metadata` object with
// the Verifier's verdict, every failed check with its evidence, the coverage and the feedback
// text a Generator would get (judging/feedback_report.h).
//
// decoy_kernel is true when the Verifier rejected a compiled candidate for a hack (it returns its
// input, skips work, reads the harness...: any failed check but a crash, a hang, a raised error or
// a failed load), also when the sandbox refused the call that gave it away: its reward is 0
// whatever it measured, and its error_code "decoy_kernel".
//
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "actors/oracle/reward.h"
#include "base/json_text.h"
#include "messages/drk.capnp.h"
#include "tools/gateway/evaluate_request.h"

namespace drk::gateway {

// The reward's formula and weights, as every result carries them.
Json reward_formula_json(const oracle::RewardWeights& weights);

// The result of an evaluated candidate.
Json evaluated_result(const EvaluateRequest& request, msg::Verdict::Reader verdict,
                      const oracle::RewardWeights& weights, double processing_seconds);

// The result of a task that could not be evaluated (its reference does not run, no device for its
// backend...): status "failed", `error_code` and the message.
Json failed_result(const EvaluateRequest& request, const std::string& error_code, const std::string& message,
                   const oracle::RewardWeights& weights, double processing_seconds);

}  // namespace drk::gateway
