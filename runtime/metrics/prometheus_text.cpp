#include "runtime/metrics/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace drk::runtime::metrics {
namespace {

bool is_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (size_t at = 0; at < name.size(); ++at) {
    const char c = name[at];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    if (!letter && !(at > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

bool is_label_name(std::string_view name) {
  if (name.empty() || name.starts_with("__")) return false;
  for (size_t at = 0; at < name.size(); ++at) {
    const char c = name[at];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(at > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Help text: backslash and line feed escaped. Label values: double quote too.
void append_escaped(std::string& out, std::string_view text, bool quote) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quote && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

void append_label(std::string& out, const std::string& name, const std::string& value) {
  out += name;
  out += "=\"";
  append_escaped(out, value, true);
  out += '"';
}

}  // namespace

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[64];
  const auto written = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, written.ptr);
}

Histogram::Histogram(std::vector<double> upper_bounds) : upper_bounds_(std::move(upper_bounds)) {
  for (size_t at = 0; at < upper_bounds_.size(); ++at) {
    if (!std::isfinite(upper_bounds_[at]) || (at > 0 && upper_bounds_[at] <= upper_bounds_[at - 1]))
      throw std::invalid_argument("a histogram's bounds must be finite and strictly ascending");
  }
  bucket_counts_.assign(upper_bounds_.size() + 1, 0);
}

void Histogram::observe(double value) {
  size_t bucket = 0;
  while (bucket < upper_bounds_.size() && value > upper_bounds_[bucket]) ++bucket;
  ++bucket_counts_[bucket];
  sum_ += value;
  ++count_;
}

void PrometheusText::counter(std::string_view name, std::string_view help) {
  if (!name.ends_with("_total"))
    throw std::invalid_argument("counter '" + std::string(name) + "': a counter's name ends in _total");
  family(name, "counter", help, Kind::counter);
}

void PrometheusText::gauge(std::string_view name, std::string_view help) {
  family(name, "gauge", help, Kind::gauge);
}

void PrometheusText::histogram_family(std::string_view name, std::string_view help) {
  family(name, "histogram", help, Kind::histogram);
  for (const char* suffix : {"_bucket", "_sum", "_count"}) declared_.insert(std::string(name) + suffix);
}

void PrometheusText::family(std::string_view name, std::string_view type, std::string_view help, Kind kind) {
  if (!is_metric_name(name)) throw std::invalid_argument("'" + std::string(name) + "' is not a metric name");
  if (!declared_.insert(std::string(name)).second)
    throw std::invalid_argument("metric '" + std::string(name) + "' is declared twice");
  family_ = name;
  kind_ = kind;
  text_ += "# HELP ";
  text_ += name;
  text_ += ' ';
  append_escaped(text_, help, false);
  text_ += "\n# TYPE ";
  text_ += name;
  text_ += ' ';
  text_ += type;
  text_ += '\n';
}

void PrometheusText::sample(const Labels& labels, double value) {
  if (kind_ != Kind::counter && kind_ != Kind::gauge)
    throw std::invalid_argument("a sample needs a counter or gauge declared before it");
  series("", labels, nullptr, value);
}

void PrometheusText::histogram(const Labels& labels, const Histogram& histogram) {
  if (kind_ != Kind::histogram) throw std::invalid_argument("histogram '" + family_ + "' is not declared last");
  uint64_t cumulative = 0;
  const auto& bounds = histogram.upper_bounds();
  for (size_t bucket = 0; bucket <= bounds.size(); ++bucket) {
    cumulative += histogram.bucket_counts()[bucket];
    const std::pair<std::string, std::string> le{"le", bucket < bounds.size() ? format_value(bounds[bucket]) : "+Inf"};
    series("_bucket", labels, &le, static_cast<double>(cumulative));
  }
  series("_sum", labels, nullptr, histogram.sum());
  series("_count", labels, nullptr, static_cast<double>(histogram.count()));
}

void PrometheusText::series(std::string_view suffix, const Labels& labels,
                            const std::pair<std::string, std::string>* le, double value) {
  text_ += family_;
  text_ += suffix;
  if (!labels.empty() || le) {
    text_ += '{';
    bool first = true;
    std::set<std::string_view> seen;
    for (const auto& [name, label_value] : labels) {
      if (!is_label_name(name) || (kind_ == Kind::histogram && name == "le") || !seen.insert(name).second)
        throw std::invalid_argument("metric '" + family_ + "': '" + name + "' is not a label name it may have");
      if (!first) text_ += ',';
      append_label(text_, name, label_value);
      first = false;
    }
    if (le) {
      if (!first) text_ += ',';
      append_label(text_, le->first, le->second);
    }
    text_ += '}';
  }
  text_ += ' ';
  text_ += format_value(value);
  text_ += '\n';
}

}  // namespace drk::runtime::metrics
