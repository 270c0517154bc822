// RefinementSearch: test-time scaling with the embedded policy (`drk generate`). A trained
// policy writes kernels for one task in several refinement iterations: the first samples
// `window x samples` schedules; each later one edits every schedule of the current window
// `samples` times, the policy seeing that schedule and its feedback as the previous turn (as in
// training's multi-turn trajectories, with turn = iteration); after each iteration the window
// becomes the `window` best attempts of all iterations so far, by reward. The answer is the best
// verified attempt of all (correct and honest, highest speedup; reward breaks ties), not the last.
//
// A schedule sampled again is not evaluated again (one attempt per distinct schedule); a
// schedule that does not render is an attempt that did not compile, with the reason.
//
// Evaluation is a seam: `drk generate` evaluates with the Evaluator's engine and judges with
// the Verifier and the Oracle's reward; tests pass a scripted function. The window and the best
// attempt are chosen by best_window() and best_verified(), which the language model's search
// (llm_refinement_search.h) shares.
//
// Thread-safety: refine() runs on the calling thread and uses the policy exclusively.
// Errors: invalid_argument for options out of range (iterations, window, samples >= 1,
// temperature > 0) or a
// problem of another device than the policy's; an error of `evaluate` (the engine failed, not the
// candidate) ends the search with that error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernels/schedule/policy.h"
#include "kernels/schedule/problem.h"
#include "base/result.h"

namespace drk::generator {

struct Outcome {
  bool compiled = false;
  bool correct = false;
  bool honest = false;
  double speedup = 0.0;
  double reward = 0.0;
  std::string summary;  // one line: the error, the failed checks, or the timing
  std::string report;   // the Oracle's feedback report (judging/feedback_report.h): what a language model is told
};

using Evaluate = std::function<Result<Outcome>(const schedule::Choice& choice, const std::string& source)>;

struct SearchOptions {
  int iterations = 4;
  int window = 2;
  int samples = 2;
  uint64_t seed = 1;
  // Divides the policy's logits: a trained policy is sharp, and at 1 its samples repeat.
  double temperature = 2.0;
};

struct Attempt {
  int iteration = 0;              // from 1
  std::optional<size_t> parent;   // the attempt it edits (none in the first iteration)
  schedule::Choice choice;
  std::string source;             // empty when it did not render
  Outcome outcome;
};

template <typename AttemptType>
struct SearchResultOf {
  std::vector<AttemptType> attempts;          // in evaluation order
  std::vector<std::vector<size_t>> windows;   // after each iteration: the kept attempts, best first
  std::optional<size_t> best;                 // the best verified attempt; none when none passed
  size_t repeated = 0;                        // sampled candidates not evaluated again
};

using SearchResult = SearchResultOf<Attempt>;

// invalid_argument unless iterations, window and samples are >= 1 and the temperature > 0.
Status check_search_options(const SearchOptions& options);

// The `window` best attempts by reward (earlier first among equals).
std::vector<size_t> best_window(const std::vector<Outcome>& outcomes, int window);

// The best verified attempt (correct and honest, highest speedup; reward breaks ties).
std::optional<size_t> best_verified(const std::vector<Outcome>& outcomes);

template <typename AttemptType>
std::vector<Outcome> outcomes_of(const std::vector<AttemptType>& attempts) {
  std::vector<Outcome> outcomes;
  outcomes.reserve(attempts.size());
  for (const auto& attempt : attempts) outcomes.push_back(attempt.outcome);
  return outcomes;
}

Result<SearchResult> refine(schedule::Policy& policy, const schedule::Problem& problem, const SearchOptions& options,
                            const Evaluate& evaluate);

}  // namespace drk::generator
