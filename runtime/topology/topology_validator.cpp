#include "runtime/topology/topology_validator.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

namespace drk::runtime {

bool is_safe_name(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

std::optional<long long> parse_integer(const YAML::Node& node) {
  if (!node.IsDefined() || !node.IsScalar()) return std::nullopt;
  const std::string& text = node.Scalar();
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_number(const YAML::Node& node) {
  if (!node.IsDefined() || !node.IsScalar() || node.Scalar().empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(node.Scalar().c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return value;
}

std::string format_number(double number) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", number);
  return text;
}

}  // namespace drk::runtime
