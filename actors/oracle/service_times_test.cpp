#include "actors/oracle/service_times.h"

#include "tests/doctest_drk.h"

using drk::oracle::ServiceTimes;

DRK_TEST_CASE("an evaluator's service time runs from when it could start to its result, weighted to the newest") {
  ServiceTimes times;
  DRK_CHECK_FALSE(times.measured_ms("evaluator.0").has_value());
  times.observe_result("evaluator.0", /*dispatched_ms=*/1000, /*now_ms=*/1100);
  DRK_CHECK(*times.measured_ms("evaluator.0") == doctest::Approx(100));
  // Dispatched at 1000 too, but held behind the first: it started at 1100.
  times.observe_result("evaluator.0", 1000, 1300);
  DRK_CHECK(*times.measured_ms("evaluator.0") ==
            doctest::Approx((1 - ServiceTimes::kWeight) * 100 + ServiceTimes::kWeight * 200));
  // After an idle gap the dispatch is the start.
  times.observe_result("evaluator.0", 5000, 5125);
  DRK_CHECK(*times.measured_ms("evaluator.0") < 150);
}

DRK_TEST_CASE("an evaluator not yet measured is expected at the mean of the others") {
  ServiceTimes times;
  DRK_CHECK(times.expected_ms("evaluator.2") == doctest::Approx(1));  // nothing measured: all alike
  times.observe_result("evaluator.0", 0, 100);
  times.observe_result("evaluator.1", 0, 300);
  DRK_CHECK(times.expected_ms("evaluator.2") == doctest::Approx(200));
  DRK_CHECK(times.expected_ms("evaluator.0") == doctest::Approx(100));
}
