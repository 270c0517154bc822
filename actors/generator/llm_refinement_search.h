// LlmRefinementSearch: test-time scaling with a language model (`drk generate` with
// generator.backend: openai), the same search as the embedded policy's (refinement_search.h):
// the first iteration asks `window x samples` fresh conversations (turn 1 of the LLM Generator's,
// prompt_builder.h); each later one continues each conversation of the current window `samples`
// times with the model's answer and the Oracle's feedback on it as the next turn; after each
// iteration the window becomes the `window` best attempts so far by reward (best_window()); the
// answer is the best verified attempt of all (best_verified()). The requests of an iteration go
// out at once, up to the client's max_in_flight; their answers are evaluated in request order.
//
// A candidate is an answer's last fenced code block (code_block.h); a candidate answered before
// is not evaluated again. An answer without one is a failed attempt (reward 0) whose reason the
// next turn tells the model; a request the server did not answer (past its retries) is a failed
// attempt whose edits ask the same conversation again, as the LLM Generator does.
//
// Evaluation is a seam, as in refine(): `drk generate` evaluates with the Evaluator's engine and
// sets Outcome.report to the Oracle's feedback report; tests pass a scripted function.
//
// Thread-safety: runs on the calling thread; the client's threads only carry its requests.
// Errors: invalid_argument for options out of range (check_search_options()); an iteration none
// of whose requests got an answer ends the search with the first request's error, which names
// the model and its endpoint (an unreachable or broken server, not a bad sample); an error of
// `evaluate` ends it with that error.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>

#include "actors/generator/llm/chat_message.h"
#include "actors/generator/llm/openai_client.h"
#include "actors/generator/llm/prompt_builder.h"
#include "actors/generator/llm/prompt_templates.h"
#include "actors/generator/refinement_search.h"
#include "base/result.h"

namespace drk::generator {

using EvaluateSource = std::function<Result<Outcome>(const std::string& source)>;

struct LlmAttempt {
  int iteration = 0;             // from 1
  std::optional<size_t> parent;  // the attempt whose conversation it continues (none in the first iteration)
  std::string id;                // "TASK/iI/aN": seeds the request (request_seed())
  Conversation conversation;     // what the model was asked, then its answer (none when it gave none)
  std::string source;            // the candidate; empty when the answer held none
  Outcome outcome;
};

using LlmSearchResult = SearchResultOf<LlmAttempt>;

struct LlmSearch {
  OpenAiClient& client;
  const SamplingOptions& sampling;  // the seed of each request: request_seed(sampling, attempt id)
  const PromptTemplates& templates;
  const TaskBrief& task;
};

Result<LlmSearchResult> refine_with_model(const LlmSearch& model, const SearchOptions& options,
                                          const EvaluateSource& evaluate);

}  // namespace drk::generator
