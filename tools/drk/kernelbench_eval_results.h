// KernelBench's eval_results.json (its scripts/eval_from_generations.py) from drkernel's
// verdicts: {"<problem id>": [entry per sample, ...]}, problem ids in numeric order, where an entry
// is
//   sample_id, compiled, correctness, metadata, runtime, runtime_stats, ref_runtime, ref_runtime_stats
// with KernelBench's meanings and drkernel's measurements:
//   compiled      the candidate passed the compile step and loaded in the sandbox (its module ran
//                 and ModelNew(*get_init_inputs()) was built with Model's parameters);
//   correctness   every correctness trial matched the reference AND the Verifier found no failed
//                 check (a candidate with right outputs that a check rejects is not correct);
//   runtime, ref_runtime   the candidate's and the reference's median time in ms, timed side by
//                 side by the engine (-1.0 when not timed); KernelBench records a mean;
//   *_stats       {median, p10, p90, cv, num_trials (samples), calls_per_trial}, in ms;
//   metadata      KernelBench's keys where they apply (hardware, device, correctness_trials,
//                 compilation_error, runtime_error, correctness_issue, other_error) and drkernel's
//                 under "drk": task, verdict (honest | rejected), failed_checks and warnings
//                 ({code, evidence}), outputs_correct, speedup, sandbox, max_abs_error,
//                 max_rel_error, reference_build, eval_ms.
//
// Thread-safety: pure functions. Errors: none (text from candidates is made valid UTF-8 by
// json_text()).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/json_text.h"
#include "messages/drk.capnp.h"
#include "tools/drk/kernelbench_score.h"

namespace drk::tools {

// The entry of sample `sample_id` of `task`, judged by `verdict` (which holds the result).
// `reference`: the sample is the problem's own Model (--references), whose correctness is its
// outputs' alone: the Verifier rightly rejects a candidate that is the reference class.
Json kernelbench_result_entry(int sample_id, const std::string& task, msg::Verdict::Reader verdict,
                              bool reference = false);

// The entry of a sample that could not be evaluated at all (its problem's reference cannot run
// here, its problem file changed since the import): neither compiled nor correct, `reason` in
// metadata.other_error.
Json kernelbench_unevaluated_entry(int sample_id, const std::string& task, const std::string& reason);

// What the score counts of an entry of problem `problem_id` of `level`.
ScoredSample scored_sample(int level, int problem_id, const Json& entry);

// One line for people: "correct, 1.042x", "wrong answer: ...", "does not compile: ...".
std::string kernelbench_entry_summary(const Json& entry);

// eval_results.json's text (indented by 4, as KernelBench writes it): entries by problem id, each
// problem's in sample order.
std::string kernelbench_results_text(const std::map<int, std::vector<Json>>& entries_by_problem);

}  // namespace drk::tools
