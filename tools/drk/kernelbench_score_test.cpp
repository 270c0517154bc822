#include "tools/drk/kernelbench_score.h"

#include <cmath>
#include <string>

#include "tests/doctest_drk.h"

using drk::tools::score_levels;
using drk::tools::score_table;
using drk::tools::ScoredSample;

DRK_TEST_CASE("fast_p counts problems whose sample 0 is correct and faster than p, over the level's problems") {
  // Level 1 has four problems; 1 and 2 correct (1.1x and 2.5x), 3 wrong, 4 without a candidate.
  // Problem 3's sample 1 is correct and fast but, as in KernelBench, only sample 0 counts.
  const std::vector<ScoredSample> samples = {
      {1, 1, 0, true, true, 1.1}, {1, 2, 0, true, true, 2.5}, {1, 3, 0, true, false, 0},
      {1, 3, 1, true, true, 9.0}, {2, 8, 0, false, false, 0},
  };
  auto scores = score_levels(samples, {{1, {1, 2, 3, 4}}, {2, {8, 9}}});
  DRK_REQUIRE(scores.size() == 2);
  const auto& one = scores[0];
  DRK_CHECK(one.level == 1);
  DRK_CHECK(one.problems == 4);
  DRK_CHECK(one.candidates == 4);
  DRK_CHECK(one.compiled == 3);
  DRK_CHECK(one.correct == 2);
  DRK_CHECK(one.fast_p[0] == doctest::Approx(0.5));   // p = 0: the fraction correct
  DRK_CHECK(one.fast_p[1] == doctest::Approx(0.5));   // p = 1.0
  DRK_CHECK(one.fast_p[2] == doctest::Approx(0.25));  // p = 1.2
  DRK_CHECK(one.fast_p[3] == doctest::Approx(0.25));  // p = 1.5
  DRK_CHECK(one.fast_p[4] == doctest::Approx(0.25));  // p = 2.0
  DRK_CHECK(one.geomean_speedup == doctest::Approx(std::sqrt(1.1 * 2.5)));
  DRK_CHECK(scores[1].problems == 2);
  DRK_CHECK(scores[1].fast_p[0] == 0);
  DRK_CHECK(scores[1].geomean_speedup == 0);
}

DRK_TEST_CASE("a speedup equal to p is not faster than p, and a sample's problem counts though unlisted") {
  auto scores = score_levels({{1, 5, 0, true, true, 1.2}}, {});
  DRK_REQUIRE(scores.size() == 1);
  DRK_CHECK(scores[0].problems == 1);
  DRK_CHECK(scores[0].fast_p[1] == 1.0);
  DRK_CHECK(scores[0].fast_p[2] == 0.0);
}

DRK_TEST_CASE("the table has a column per threshold and a row per level") {
  const std::string table = score_table(score_levels({{1, 1, 0, true, true, 1.5}}, {{1, {1, 2}}}));
  DRK_CHECK(table.find("fast_0 fast_1.0 fast_1.2 fast_1.5 fast_2.0") != std::string::npos);
  DRK_CHECK(table.find("0.500    0.500    0.500    0.000    0.000") != std::string::npos);
}
