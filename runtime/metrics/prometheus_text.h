// PrometheusText: metrics written in Prometheus's text exposition format 0.0.4 (what a scraper
// reads from GET /metrics, served as `text/plain; version=0.0.4`). It knows no application: a
// caller adds families, each with its `# HELP` and `# TYPE` lines, then the family's samples.
//
//   PrometheusText text;
//   text.counter("drk_evaluations_total", "Evaluations recorded, by outcome.");
//   text.sample({{"outcome", "correct"}}, 12);
//   text.histogram_family("drk_evaluation_phase_seconds", "...");
//   text.histogram({{"phase", "load"}}, load_seconds);   // _bucket{le=...} cumulative, +Inf, _sum, _count
//
// Names follow Prometheus's conventions, and a name that breaks the format is a fault of the
// caller (std::invalid_argument): metric names match [a-zA-Z_:][a-zA-Z0-9_:]*, a counter's ends in
// `_total`, label names match [a-zA-Z_][a-zA-Z0-9_]* and do not start with `__`, a family is
// declared once, a sample belongs to the family declared last and has its kind (sample() for a
// counter or gauge, histogram() for a histogram), and `le` is the histogram's own label. Label
// values and help texts are escaped (backslash, double quote in values, line feed); values are
// written in the shortest form that reads back the same, NaN and +Inf/-Inf as Prometheus spells them.
//
// Thread-safety: plain values for one thread.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace drk::runtime::metrics {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Observations counted into buckets by upper bound (inclusive, as Prometheus's `le`).
class Histogram {
 public:
  // `upper_bounds`: finite, strictly ascending; +Inf is implied (std::invalid_argument otherwise).
  explicit Histogram(std::vector<double> upper_bounds);

  void observe(double value);

  const std::vector<double>& upper_bounds() const { return upper_bounds_; }
  // Per bucket, not cumulative: one more than the bounds (the last is beyond every bound).
  const std::vector<uint64_t>& bucket_counts() const { return bucket_counts_; }
  double sum() const { return sum_; }
  uint64_t count() const { return count_; }

 private:
  std::vector<double> upper_bounds_;
  std::vector<uint64_t> bucket_counts_;
  double sum_ = 0;
  uint64_t count_ = 0;
};

class PrometheusText {
 public:
  void counter(std::string_view name, std::string_view help);
  void gauge(std::string_view name, std::string_view help);
  void histogram_family(std::string_view name, std::string_view help);

  // A sample of the counter or gauge declared last.
  void sample(const Labels& labels, double value);
  // The series of the histogram declared last: its buckets (cumulative, `+Inf` last), sum and count.
  void histogram(const Labels& labels, const Histogram& histogram);

  const std::string& text() const { return text_; }

 private:
  enum class Kind { none, counter, gauge, histogram };
  void family(std::string_view name, std::string_view type, std::string_view help, Kind kind);
  void series(std::string_view suffix, const Labels& labels, const std::pair<std::string, std::string>* le,
              double value);

  std::string text_;
  std::string family_;
  Kind kind_ = Kind::none;
  std::set<std::string, std::less<>> declared_;
};

// The value as the format writes it: "NaN", "+Inf", "-Inf", or the shortest decimal that reads
// back the same ("3", "0.25", "1e-07").
std::string format_value(double value);

}  // namespace drk::runtime::metrics
