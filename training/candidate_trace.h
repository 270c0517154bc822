// The trace id of the messages about one candidate (Envelope.traceId, runtime::SendOptions::
// trace_id): the Generator sends the Candidate with it, the Oracle its EvalRequest, Feedback and
// Scored, the Evaluator and the Verifier pass on the one they received. Derived from the
// candidate's id alone, so that each actor finds it without carrying it, and a candidate sent
// again keeps it. `drk trace` follows it across actors as one flow (docs/traces.md).
// Thread-safety: a pure function.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/fnv1a.h"

namespace drk::training {

constexpr uint64_t candidate_trace_id(std::string_view candidate_id) {
  const uint64_t hash = fnv1a_64(candidate_id);
  return hash != 0 ? hash : 1;  // 0 means "no trace"
}

}  // namespace drk::training
