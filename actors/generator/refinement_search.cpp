#include "actors/generator/refinement_search.h"

#include <algorithm>
#include <map>
#include <random>

#include "kernels/schedule/observation.h"
#include "kernels/schedule/render.h"

namespace drk::generator {
namespace {

bool verified(const Outcome& outcome) { return outcome.compiled && outcome.correct && outcome.honest; }

}  // namespace

Status check_search_options(const SearchOptions& options) {
  if (options.iterations < 1 || options.window < 1 || options.samples < 1 || !(options.temperature > 0.0))
    return make_error(Errc::invalid_argument,
                      "the refinement search needs iterations, window and samples >= 1 and a temperature > 0 (got " +
                          std::to_string(options.iterations) + ", " + std::to_string(options.window) + ", " +
                          std::to_string(options.samples) + ", " + std::to_string(options.temperature) + ")");
  return {};
}

std::vector<size_t> best_window(const std::vector<Outcome>& outcomes, int window) {
  std::vector<size_t> order(outcomes.size());
  for (size_t index = 0; index < order.size(); ++index) order[index] = index;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return outcomes[a].reward > outcomes[b].reward; });
  order.resize(std::min(order.size(), static_cast<size_t>(window)));
  return order;
}

std::optional<size_t> best_verified(const std::vector<Outcome>& outcomes) {
  std::optional<size_t> best;
  for (size_t index = 0; index < outcomes.size(); ++index) {
    const Outcome& candidate = outcomes[index];
    if (!verified(candidate)) continue;
    if (!best) {
      best = index;
      continue;
    }
    const Outcome& leader = outcomes[*best];
    if (candidate.speedup > leader.speedup || (candidate.speedup == leader.speedup && candidate.reward > leader.reward))
      best = index;
  }
  return best;
}

Result<SearchResult> refine(schedule::Policy& policy, const schedule::Problem& problem, const SearchOptions& options,
                            const Evaluate& evaluate) {
  if (auto checked = check_search_options(options); !checked) return checked.error();
  if (policy.device() != problem.device)
    return make_error(Errc::invalid_argument,
                      "task '" + problem.task + "' is evaluated on " + std::string(schedule::device_name(problem.device)) +
                          " but the policy serves the " + std::string(schedule::device_name(policy.device())) +
                          " space: generate with the device the policy was trained for");
  SearchResult result;
  std::map<std::string, size_t> seen;  // describe() -> attempt
  std::mt19937_64 rng(options.seed);
  // One attempt for a sampled choice: rendered and evaluated unless it was sampled before.
  auto attempt = [&](int iteration, std::optional<size_t> parent, const schedule::Choice& choice) -> Status {
    if (seen.count(choice.describe())) {
      ++result.repeated;
      return {};
    }
    Attempt tried{iteration, parent, choice, {}, {}};
    auto source = schedule::render(problem, choice);
    if (!source) {
      tried.outcome.summary = "does not render: " + source.error().message;
    } else {
      tried.source = *source;
      auto outcome = evaluate(choice, tried.source);
      if (!outcome) return outcome.error();
      tried.outcome = std::move(*outcome);
    }
    seen[choice.describe()] = result.attempts.size();
    result.attempts.push_back(std::move(tried));
    return {};
  };
  const int first_draws = options.window * options.samples;
  for (int draw = 0; draw < first_draws; ++draw) {
    auto sampled = policy.sample(problem.family, schedule::observe(problem, 1, options.iterations, std::nullopt),
                                 std::nullopt, rng, options.temperature);
    if (auto status = attempt(1, std::nullopt, sampled.choice); !status) return status.error();
  }
  result.windows.push_back(best_window(outcomes_of(result.attempts), options.window));
  for (int iteration = 2; iteration <= options.iterations; ++iteration) {
    for (size_t parent : result.windows.back()) {
      // Copies: attempt() grows the vector that holds the parent.
      const schedule::Choice previous_choice = result.attempts[parent].choice;
      const Outcome previous = result.attempts[parent].outcome;
      const schedule::PreviousTurn turn{previous_choice, previous.compiled, previous.correct,
                                        previous.honest, previous.speedup, previous.reward};
      const auto observation = schedule::observe(problem, iteration, options.iterations, turn);
      for (int draw = 0; draw < options.samples; ++draw) {
        auto sampled = policy.sample(problem.family, observation, previous_choice, rng, options.temperature);
        if (auto status = attempt(iteration, parent, sampled.choice); !status) return status.error();
      }
    }
    result.windows.push_back(best_window(outcomes_of(result.attempts), options.window));
  }
  result.best = best_verified(outcomes_of(result.attempts));
  return result;
}

}  // namespace drk::generator
