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
// the Verifier and the Oracle's reward; tests pass a scripted function.
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

struct SearchResult {
  std::vector<Attempt> attempts;              // in evaluation order
  std::vector<std::vector<size_t>> windows;   // after each iteration: the kept attempts, best first
  std::optional<size_t> best;                 // the best verified attempt; none when none passed
  size_t repeated = 0;                        // sampled schedules not evaluated again
};

Result<SearchResult> refine(schedule::Policy& policy, const schedule::Problem& problem, const SearchOptions& options,
                            const Evaluate& evaluate);

}  // namespace drk::generator
