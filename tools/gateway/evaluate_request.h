// EvaluateRequest: one evaluation a client asks the gateway for (`POST /evaluate`, docs/gateway.md),
// with KernelGYM's field names: `reference_code` is a KernelBench problem (a Model with get_inputs
// and get_init_inputs), `kernel_code` its candidate (a ModelNew), `backend` what the candidate was
// asked to write (cuda, triton; ours: pytorch, cpp), which its static checks judge it against.
//
// num_correct_trials, num_perf_trials, num_warmup, timeout and enable_profiling are KernelGYM's
// knobs, applied per request where they are given (engine_task_evaluator.h says how); absent, the
// gateway's own (`drk serve --trials`, the timing's precision target, no extra warm-up calls, no
// profile in the result).
//
// Thread-safety: plain values and pure functions. Errors: parse_evaluate_request returns
// invalid_argument naming the field and what it takes.
#pragma once

#include <optional>
#include <string>

#include "base/json_text.h"
#include "base/result.h"
#include "judging/python_static_check.h"

namespace drk::gateway {

struct EvaluateRequest {
  std::string task_id;  // the client's, or one the gateway made
  std::string reference_code;
  std::string kernel_code;
  judging::Backend backend = judging::Backend::cuda;  // KernelGYM's default
  std::string entry_point = "Model";
  std::optional<int> num_correct_trials;
  std::optional<int> num_perf_trials;
  std::optional<int> num_warmup;
  std::optional<double> timeout;  // seconds
  int priority = 0;      // higher first; KernelGYM's "high" 1, "normal" 0, "low" -1
  bool enable_profiling = false;
};

// `body` as a request; a request without task_id gets `generated_id`.
Result<EvaluateRequest> parse_evaluate_request(const Json& body, const std::string& generated_id);

// KernelGYM's knobs as the client gave them (null where absent), and enable_profiling.
Json requested_knobs_json(const EvaluateRequest& request);

// The request as JSON, every field (what the gateway stores and parse_evaluate_request reads back).
Json evaluate_request_json(const EvaluateRequest& request);

}  // namespace drk::gateway
