#include "actors/oracle/advantage.h"

#include <cmath>

#include "tests/doctest_drk.h"

using drk::oracle::compute_advantages;
using drk::oracle::Estimator;
using drk::oracle::TrajectoryRewards;

namespace {
double advantage_of(const std::vector<drk::oracle::TurnAdvantage>& items, const std::string& id,
                    uint32_t turn) {
  for (const auto& item : items)
    if (item.trajectory_id == id && item.turn == turn) return item.advantage;
  DRK_FAIL("no advantage for " << id << " turn " << turn);
  return 0;
}
}  // namespace

DRK_TEST_CASE("TRLOO returns are reward-to-go and the baseline leaves the sample out") {
  // Task "a": three trajectories of two turns. Returns at turn 1: 3, 1, 2; at turn 2: 2, 0, 1.
  const std::vector<TrajectoryRewards> trajectories = {
      {"a0", "a", {1.0, 2.0}}, {"a1", "a", {1.0, 0.0}}, {"a2", "a", {1.0, 1.0}}};
  const auto items = compute_advantages(trajectories, Estimator::trloo);
  DRK_REQUIRE(items.size() == 6);
  DRK_CHECK(items[0].return_value == doctest::Approx(3.0));
  DRK_CHECK(advantage_of(items, "a0", 1) == doctest::Approx(3.0 - (1.0 + 2.0) / 2));
  DRK_CHECK(advantage_of(items, "a1", 1) == doctest::Approx(1.0 - (3.0 + 2.0) / 2));
  DRK_CHECK(advantage_of(items, "a2", 2) == doctest::Approx(1.0 - (2.0 + 0.0) / 2));
}

DRK_TEST_CASE("a group of one keeps its return; tasks form separate groups") {
  const std::vector<TrajectoryRewards> trajectories = {{"a0", "a", {0.7}}, {"b0", "b", {0.2}}};
  const auto items = compute_advantages(trajectories, Estimator::trloo);
  DRK_CHECK(advantage_of(items, "a0", 1) == doctest::Approx(0.7));
  DRK_CHECK(advantage_of(items, "b0", 1) == doctest::Approx(0.2));
}

DRK_TEST_CASE("turn groups shrink as trajectories end") {
  // b1 has one turn only: at turn 2 the group of task b has one member.
  const std::vector<TrajectoryRewards> trajectories = {{"b0", "b", {1.0, 1.0}}, {"b1", "b", {0.5}}};
  const auto items = compute_advantages(trajectories, Estimator::trloo);
  DRK_CHECK(advantage_of(items, "b0", 1) == doctest::Approx(2.0 - 0.5));
  DRK_CHECK(advantage_of(items, "b0", 2) == doctest::Approx(1.0));
}

DRK_TEST_CASE("GRPO normalises by the group's mean and standard deviation") {
  const std::vector<TrajectoryRewards> trajectories = {{"a0", "a", {1.0}}, {"a1", "a", {3.0}}};
  const auto items = compute_advantages(trajectories, Estimator::grpo);
  DRK_CHECK(advantage_of(items, "a0", 1) == doctest::Approx(-1.0).epsilon(1e-5));
  DRK_CHECK(advantage_of(items, "a1", 1) == doctest::Approx(1.0).epsilon(1e-5));
}
