// The profile of one evaluation, as a gateway result's `metadata.profile` carries it when the
// request asked for it (KernelGYM's enable_profiling, docs/gateway.md): what the evaluation
// measured beyond the runtimes. Every device: both sides' timing statistics (median, p10, p90, cv,
// samples, calls per sample), where the evaluation's time went (compile, load, correctness,
// timing), the candidate's calls. CUDA: the CUPTI profile (every kernel of the profiled calls with
// its launches and times, coverage, the hardware counters when the gateway measures them) and the
// roofline position against the device's measured peaks. What the device cannot give is named in
// `not_available`, never left out silently.
//
// Thread-safety: pure function.
#pragma once

#include "base/json_text.h"
#include "messages/drk.capnp.h"

namespace drk::gateway {

Json evaluation_profile_json(msg::EvalResult::Reader result);

}  // namespace drk::gateway
