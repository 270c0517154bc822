// The refinement search of `drk generate` (test-time scaling) with a scripted evaluation: the
// window keeps the best attempts, later iterations edit them, a schedule is evaluated once, the
// answer is the best verified attempt of all iterations (never a dishonest one), and a schedule
// that does not render, an evaluation that fails and a policy of another device are handled.
#include <algorithm>
#include <set>

#include "actors/generator/refinement_search.h"
#include "kernels/schedule/space.h"
#include "tests/doctest_drk.h"

namespace drk::generator {
namespace {

using schedule::Choice;
using schedule::Device;
using schedule::Family;
namespace knob = schedule::elementwise_knob;

schedule::Problem relu_problem(Device device = Device::cpu) {
  schedule::Problem problem;
  problem.task = "relu";
  problem.family = Family::elementwise;
  problem.device = device;
  problem.params = {{"stages", "v > 0.0f ? v : 0.0f"}};
  problem.inputs = {{"x", {128, 4096}}};
  problem.outputs = {{"y", {128, 4096}}};
  return problem;
}

// Wider vectors and larger chunks are faster; threads=2 is caught cheating, and fastest of all.
Outcome scripted(const Choice& choice) {
  Outcome outcome;
  outcome.compiled = true;
  outcome.correct = true;
  outcome.honest = choice.value(knob::threads) != "2";
  outcome.speedup = 1.0 + choice.at(knob::vector_width) + 0.1 * choice.at(knob::chunk) + (outcome.honest ? 0.0 : 10.0);
  outcome.reward = outcome.honest ? 0.5 + 0.5 * std::min(outcome.speedup, 3.0) : 0.0;
  return outcome;
}

}  // namespace

DRK_TEST_CASE("the window keeps the best attempts, later iterations edit them, the best verified one wins") {
  schedule::Policy policy(7, Device::cpu);
  size_t evaluations = 0;
  SearchOptions options;
  options.iterations = 4;
  options.window = 2;
  options.samples = 3;
  auto result = refine(policy, relu_problem(), options, [&](const Choice& choice, const std::string& source) {
    ++evaluations;
    DRK_CHECK(source.find("drk_kernel") != std::string::npos);
    return Result<Outcome>(scripted(choice));
  });
  DRK_REQUIRE_MESSAGE(result.ok(), result.error().describe());
  const auto& attempts = result->attempts;
  DRK_CHECK(evaluations == attempts.size());
  DRK_CHECK(attempts.size() + result->repeated == 6 + 3 * 2 * 3);
  std::set<std::string> distinct;
  for (const auto& attempt : attempts) distinct.insert(attempt.choice.describe());
  DRK_CHECK(distinct.size() == attempts.size());
  DRK_REQUIRE(result->windows.size() == 4);
  for (size_t iteration = 0; iteration < result->windows.size(); ++iteration) {
    const auto& window = result->windows[iteration];
    DRK_CHECK(window.size() == 2);
    // The window: no attempt of these iterations has a higher reward than its last member.
    for (size_t index = 0; index < attempts.size(); ++index) {
      if (attempts[index].iteration > static_cast<int>(iteration) + 1) continue;
      if (std::find(window.begin(), window.end(), index) != window.end()) continue;
      DRK_CHECK(attempts[index].outcome.reward <= attempts[window.back()].outcome.reward);
    }
  }
  for (const auto& attempt : attempts) {
    if (attempt.iteration == 1) {
      DRK_CHECK_FALSE(attempt.parent.has_value());
      continue;
    }
    DRK_REQUIRE(attempt.parent.has_value());
    const auto& previous_window = result->windows[static_cast<size_t>(attempt.iteration) - 2];
    DRK_CHECK(std::find(previous_window.begin(), previous_window.end(), *attempt.parent) != previous_window.end());
  }
  DRK_REQUIRE(result->best.has_value());
  const auto& best = attempts[*result->best].outcome;
  DRK_CHECK(best.honest);
  for (const auto& attempt : attempts)
    if (attempt.outcome.honest) DRK_CHECK(attempt.outcome.speedup <= best.speedup);
}

DRK_TEST_CASE("a schedule that does not render is a failed attempt; no attempt passes, no best") {
  schedule::Policy policy(7, Device::cpu);
  auto problem = relu_problem();
  problem.params["stages"] = "v; v";  // a statement: parse_stages refuses it
  bool evaluated = false;
  auto result = refine(policy, problem, SearchOptions{2, 1, 2, 3}, [&](const Choice&, const std::string&) {
    evaluated = true;
    return Result<Outcome>(Outcome{});
  });
  DRK_REQUIRE(result.ok());
  DRK_CHECK_FALSE(evaluated);
  DRK_REQUIRE_FALSE(result->attempts.empty());
  for (const auto& attempt : result->attempts) {
    DRK_CHECK_FALSE(attempt.outcome.compiled);
    DRK_CHECK(attempt.outcome.summary.find("does not render") == 0);
  }
  DRK_CHECK_FALSE(result->best.has_value());
}

DRK_TEST_CASE("an evaluation that fails ends the search; bad options and another device are refused") {
  schedule::Policy policy(7, Device::cpu);
  auto failed = refine(policy, relu_problem(), SearchOptions{}, [](const Choice&, const std::string&) {
    return Result<Outcome>(make_error(Errc::peer_unavailable, "the sandbox could not start"));
  });
  DRK_REQUIRE_FALSE(failed.ok());
  DRK_CHECK(failed.error().code == Errc::peer_unavailable);
  auto no_window = refine(policy, relu_problem(), SearchOptions{3, 0, 2, 1},
                          [](const Choice& choice, const std::string&) { return Result<Outcome>(scripted(choice)); });
  DRK_REQUIRE_FALSE(no_window.ok());
  DRK_CHECK(no_window.error().code == Errc::invalid_argument);
  auto other_device = refine(policy, relu_problem(Device::cuda), SearchOptions{},
                             [](const Choice& choice, const std::string&) { return Result<Outcome>(scripted(choice)); });
  DRK_REQUIRE_FALSE(other_device.ok());
  DRK_CHECK(other_device.error().message.find("cuda") != std::string::npos);
}

}  // namespace drk::generator
