#include "actors/generator/llm_refinement_search.h"

#include <future>
#include <set>
#include <utility>
#include <vector>

#include "actors/generator/llm/code_block.h"

namespace drk::generator {
namespace {

// A request of the current iteration: its attempt, not yet evaluated, and the answer awaited.
struct Request {
  LlmAttempt attempt;
  std::shared_future<Result<Completion>> answer;
};

// The conversation that edits `parent`: its answer and what came of it as the next turn; a
// request that got no answer is asked again as it was.
Conversation continued(const PromptTemplates& templates, const LlmAttempt& parent, int iteration, int iterations) {
  Conversation next = parent.conversation;
  if (next.empty() || next.back().role != "assistant") return next;
  const auto turn = static_cast<uint32_t>(iteration);
  const auto turns = static_cast<uint32_t>(iterations);
  next.push_back(feedback_message(
      templates, parent.source.empty() ? TurnReport{turn, turns, "no candidate", parent.outcome.report, 0.0}
                                       : evaluated_turn(turn, turns, parent.outcome.report, parent.outcome.reward)));
  return next;
}

}  // namespace

Result<LlmSearchResult> refine_with_model(const LlmSearch& model, const SearchOptions& options,
                                          const EvaluateSource& evaluate) {
  if (auto checked = check_search_options(options); !checked) return checked.error();
  LlmSearchResult result;
  std::set<std::string> evaluated;  // candidate sources
  for (int iteration = 1; iteration <= options.iterations; ++iteration) {
    std::vector<Request> requests;
    auto ask = [&](std::optional<size_t> parent, Conversation conversation) {
      LlmAttempt attempt{iteration, parent,
                         model.task.name + "/i" + std::to_string(iteration) + "/a" + std::to_string(requests.size()),
                         std::move(conversation), {}, {}};
      auto answer = model.client.submit(attempt.conversation, request_seed(model.sampling, attempt.id));
      requests.push_back({std::move(attempt), std::move(answer)});
    };
    if (iteration == 1) {
      for (int draw = 0; draw < options.window * options.samples; ++draw)
        ask(std::nullopt, opening_conversation(model.templates, model.task));
    } else {
      for (const size_t parent : result.windows.back()) {
        const Conversation next = continued(model.templates, result.attempts[parent], iteration, options.iterations);
        for (int draw = 0; draw < options.samples; ++draw) ask(parent, next);
      }
    }
    std::optional<Error> first_unanswered;
    size_t answered = 0;
    for (auto& [attempt, answer_future] : requests) {
      const Result<Completion> answer = answer_future.get();
      if (!answer) {
        if (!first_unanswered) first_unanswered = answer.error();
        attempt.outcome.summary = "no answer: " + answer.error().message;
        result.attempts.push_back(std::move(attempt));
        continue;
      }
      ++answered;
      attempt.conversation.push_back({"assistant", answer->text});
      auto block = last_code_block(answer->text);
      if (!block) {
        attempt.outcome.summary = "no candidate: " + block.error().message;
        attempt.outcome.report = block.error().message;
        result.attempts.push_back(std::move(attempt));
        continue;
      }
      if (!evaluated.insert(block->code).second) {
        ++result.repeated;
        continue;
      }
      attempt.source = std::move(block->code);
      auto outcome = evaluate(attempt.source);
      if (!outcome) return outcome.error();
      attempt.outcome = std::move(*outcome);
      result.attempts.push_back(std::move(attempt));
    }
    if (answered == 0) return *first_unanswered;
    result.windows.push_back(best_window(outcomes_of(result.attempts), options.window));
  }
  result.best = best_verified(outcomes_of(result.attempts));
  return result;
}

}  // namespace drk::generator
