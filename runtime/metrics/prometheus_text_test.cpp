// The Prometheus text writer: families with HELP and TYPE, escaped labels and help, cumulative
// histogram buckets with +Inf, values as Prometheus spells them, names that break the format
// refused; and promtool (Prometheus's own parser and linter) accepts what it writes.
#include "runtime/metrics/prometheus_text.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "tests/doctest_drk.h"
#include "tests/support/promtool.h"

namespace {

using drk::runtime::metrics::format_value;
using drk::runtime::metrics::Histogram;
using drk::runtime::metrics::PrometheusText;

// A histogram of `bounds` (a function, so that a braced list is the bounds, not a Histogram).
Histogram bounded(std::vector<double> bounds) { return Histogram(std::move(bounds)); }

// A text with one family of each kind, labels that need escaping included.
PrometheusText every_kind() {
  PrometheusText text;
  text.counter("drk_evaluations_total", "Evaluations recorded, by outcome.");
  text.sample({{"outcome", "correct"}}, 12);
  text.sample({{"outcome", "hacked"}}, 1);
  text.gauge("drk_mailbox_depth", "Envelopes waiting in an actor's mailbox.");
  text.sample({{"actor", "evaluator-\"1\"\\\nx"}}, 3);
  text.gauge("drk_up", "One: the run answers.");
  text.sample({}, 1);
  Histogram load = bounded({0.01, 0.1, 1});
  for (double seconds : {0.005, 0.05, 0.05, 0.5, 7.0}) load.observe(seconds);
  text.histogram_family("drk_evaluation_phase_seconds", "Where an evaluation's time went,\nby phase.");
  text.histogram({{"phase", "load"}}, load);
  text.histogram({{"phase", "timing"}}, bounded({1}));
  return text;
}

}  // namespace

DRK_TEST_CASE("families are written with HELP and TYPE, labels escaped, histograms cumulative with +Inf, _sum and _count") {
  const std::string text = every_kind().text();
  DRK_CHECK(text.find("# HELP drk_evaluations_total Evaluations recorded, by outcome.\n"
                      "# TYPE drk_evaluations_total counter\n"
                      "drk_evaluations_total{outcome=\"correct\"} 12\n"
                      "drk_evaluations_total{outcome=\"hacked\"} 1\n") == 0);
  DRK_CHECK(text.find("drk_mailbox_depth{actor=\"evaluator-\\\"1\\\"\\\\\\nx\"} 3\n") != std::string::npos);
  DRK_CHECK(text.find("drk_up 1\n") != std::string::npos);
  DRK_CHECK(text.find("# HELP drk_evaluation_phase_seconds Where an evaluation's time went,\\nby phase.\n"
                      "# TYPE drk_evaluation_phase_seconds histogram\n"
                      "drk_evaluation_phase_seconds_bucket{phase=\"load\",le=\"0.01\"} 1\n"
                      "drk_evaluation_phase_seconds_bucket{phase=\"load\",le=\"0.1\"} 3\n"
                      "drk_evaluation_phase_seconds_bucket{phase=\"load\",le=\"1\"} 4\n"
                      "drk_evaluation_phase_seconds_bucket{phase=\"load\",le=\"+Inf\"} 5\n"
                      "drk_evaluation_phase_seconds_sum{phase=\"load\"} 7.605\n"
                      "drk_evaluation_phase_seconds_count{phase=\"load\"} 5\n") != std::string::npos);
  DRK_CHECK(text.find("drk_evaluation_phase_seconds_bucket{phase=\"timing\",le=\"+Inf\"} 0\n") != std::string::npos);
}

DRK_TEST_CASE("values are written as Prometheus reads them") {
  DRK_CHECK(format_value(3) == "3");
  DRK_CHECK(format_value(0.25) == "0.25");
  DRK_CHECK(format_value(-2.5) == "-2.5");
  DRK_CHECK(format_value(1e-7) == "1e-07");
  DRK_CHECK(format_value(std::nan("")) == "NaN");
  DRK_CHECK(format_value(std::numeric_limits<double>::infinity()) == "+Inf");
  DRK_CHECK(format_value(-std::numeric_limits<double>::infinity()) == "-Inf");
}

DRK_TEST_CASE("a bucket's bound is inclusive") {
  Histogram histogram = bounded({1, 2});
  histogram.observe(1);
  histogram.observe(2);
  histogram.observe(2.5);
  DRK_CHECK(histogram.bucket_counts() == std::vector<uint64_t>{1, 1, 1});
  DRK_CHECK(histogram.count() == 3);
  DRK_CHECK(histogram.sum() == 5.5);
}

DRK_TEST_CASE("names and uses that break the format are refused") {
  PrometheusText text;
  DOCTEST_CHECK_THROWS_AS(text.counter("drk_evaluations", "no _total"), std::invalid_argument);
  DOCTEST_CHECK_THROWS_AS(text.gauge("1drk", "starts with a digit"), std::invalid_argument);
  DOCTEST_CHECK_THROWS_AS(text.gauge("drk-depth", "a dash"), std::invalid_argument);
  DOCTEST_CHECK_THROWS_AS(text.sample({}, 1), std::invalid_argument);  // no family yet
  text.gauge("drk_depth", "Depth.");
  DOCTEST_CHECK_THROWS_AS(text.gauge("drk_depth", "again"), std::invalid_argument);
  DOCTEST_CHECK_THROWS_AS(text.sample({{"__reserved", "x"}}, 1), std::invalid_argument);
  DOCTEST_CHECK_THROWS_AS(text.sample({{"a-b", "x"}}, 1), std::invalid_argument);
  DOCTEST_CHECK_THROWS_AS(text.sample({{"actor", "x"}, {"actor", "y"}}, 1), std::invalid_argument);
  DOCTEST_CHECK_THROWS_AS(text.histogram({}, bounded({1})), std::invalid_argument);
  text.histogram_family("drk_seconds", "Seconds.");
  DOCTEST_CHECK_THROWS_AS(text.histogram({{"le", "1"}}, bounded({1})), std::invalid_argument);
  DOCTEST_CHECK_THROWS_AS(text.gauge("drk_seconds_count", "a histogram's series"), std::invalid_argument);
  DOCTEST_CHECK_THROWS_AS(bounded({2, 1}), std::invalid_argument);
}

DRK_TEST_CASE("promtool check metrics accepts the writer's text") {
  const auto checked = drk::testing::promtool_check(every_kind().text());
  if (!checked) {
    DRK_MESSAGE(drk::testing::kPromtoolMissing);
    return;
  }
  DRK_CHECK_MESSAGE(checked->exit_code == 0, checked->output);
}

DRK_TEST_CASE("promtool refuses a text that breaks the format (the check above can fail)") {
  const auto checked = drk::testing::promtool_check("drk_evaluations_total{outcome=\"x} 1\n");
  if (!checked) {
    DRK_MESSAGE(drk::testing::kPromtoolMissing);
    return;
  }
  DRK_CHECK(checked->exit_code != 0);
}
