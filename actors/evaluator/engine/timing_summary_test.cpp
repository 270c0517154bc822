#include "actors/evaluator/engine/timing_summary.h"

#include <cmath>

#include <capnp/message.h>

#include "tests/doctest_drk.h"

using namespace drk::evaluator;

DRK_TEST_CASE("percentiles interpolate between sorted samples") {
  const std::vector<double> sorted = {1, 2, 3, 4, 5};
  DRK_CHECK(percentile(sorted, 0.5) == doctest::Approx(3));
  DRK_CHECK(percentile(sorted, 0.1) == doctest::Approx(1.4));
  DRK_CHECK(percentile(sorted, 0.9) == doctest::Approx(4.6));
  DRK_CHECK(percentile(sorted, 1.0) == doctest::Approx(5));
  DRK_CHECK(percentile({}, 0.5) == 0.0);
}

DRK_TEST_CASE("a summary sorts its samples and measures their spread") {
  const TimingSummary s = summarize({4, 1, 3, 2}, 7);
  DRK_CHECK(s.samples == 4);
  DRK_CHECK(s.calls == 7);
  DRK_CHECK(s.median == doctest::Approx(2.5));
  DRK_CHECK(s.p10 == doctest::Approx(1.3));
  DRK_CHECK(s.p90 == doctest::Approx(3.7));
  // Sample standard deviation sqrt(5/3) over the mean 2.5.
  DRK_CHECK(s.cv == doctest::Approx(std::sqrt(5.0 / 3.0) / 2.5));
  const TimingSummary empty = summarize({}, 1);
  DRK_CHECK(empty.samples == 0);
  DRK_CHECK(empty.median == 0.0);
  DRK_CHECK(summarize({2.0}, 1).cv == 0.0);
}

DRK_TEST_CASE("the median's relative standard error shrinks with the spread and the count") {
  DRK_CHECK(relative_error_of_median({5.0}) == 1.0);
  DRK_CHECK(relative_error_of_median({0.0, 0.0}) == 1.0);
  const std::vector<double> spread = {9, 10, 11, 10};
  const double sigma = std::sqrt(2.0 / 3.0);
  DRK_CHECK(relative_error_of_median(spread) == doctest::Approx(1.2533 * sigma / 2.0 / 10.0));
  std::vector<double> more;
  for (int i = 0; i < 4; ++i) more.insert(more.end(), spread.begin(), spread.end());
  DRK_CHECK(relative_error_of_median(more) < relative_error_of_median(spread));
}

DRK_TEST_CASE("timing settles when both medians are precise, when the budget is spent, or at the cap") {
  const SettleRule rule{5, 8, 0.01, 100.0};
  const std::vector<double> steady(5, 10.0);
  std::vector<double> noisy = {1, 30, 2, 40, 3};
  DRK_CHECK(rule.settled(steady, steady, 0));
  // Precise, but fewer samples than the minimum.
  DRK_CHECK_FALSE(rule.settled({10, 10, 10, 10}, {10, 10, 10, 10}, 0));
  // One side noisy: not before the budget is spent...
  DRK_CHECK_FALSE(rule.settled(noisy, steady, 99));
  DRK_CHECK(rule.settled(noisy, steady, 100));
  // ...which needs three samples a side.
  DRK_CHECK_FALSE(rule.settled({1, 30}, {10, 10}, 1000));
  // The cap ends it whatever the precision.
  std::vector<double> capped = {1, 30, 2, 40, 3, 50, 4, 60};
  DRK_CHECK(rule.settled(capped, capped, 0));
}

DRK_TEST_CASE("a summary fills the result's timing statistics") {
  capnp::MallocMessageBuilder message;
  auto stats = message.initRoot<drk::msg::TimingStats>();
  fill_timing(summarize({1, 2, 3}, 4), stats);
  DRK_CHECK(stats.getMedianUs() == doctest::Approx(2));
  DRK_CHECK(stats.getSamples() == 3);
  DRK_CHECK(stats.getCallsPerSample() == 4);
}
