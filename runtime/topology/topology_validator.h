// Validator: collects every schema error of a topology document, each with its place (file and
// line, through the Locator) and the expected form, so that one load reports them all; and the
// small value parsers the checks share.
//
// Thread-safety: one Validator per load, on one thread. Errors: collected, returned by finish().
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"
#include "runtime/topology/topology.h"
#include "runtime/topology/topology_locator.h"

namespace drk::runtime {

constexpr std::size_t kMaxNameLength = 64;  // ipc socket paths are limited to ~107 bytes

// A name of letters, digits, `_`, `-` or `.`, at most kMaxNameLength long.
bool is_safe_name(const std::string& name);
// The node's scalar as a whole integer or number; nullopt for anything else.
std::optional<long long> parse_integer(const YAML::Node& node);
std::optional<double> parse_number(const YAML::Node& node);
// A number as a person writes it: 2, 0.5, 1e-06.
std::string format_number(double number);

// Collects every schema error of a document, each with its place and expected form.
class Validator {
 public:
  explicit Validator(const Locator& locator) : locator_(locator) {}

  std::string where(const YAML::Node& node) const { return locator_.where(node); }

  void fail(const YAML::Node& at, const std::string& message) { fail_at(locator_.where(at), message); }
  void fail_at(const std::string& where, const std::string& message) { errors_.push_back(where + ": " + message); }

  void check_keys(const YAML::Node& map, const std::string& path, const std::set<std::string>& allowed) {
    for (const auto& pair : map) {
      const std::string key = pair.first.Scalar();
      if (allowed.count(key)) continue;
      std::string expected;
      for (const auto& name : allowed) expected += (expected.empty() ? "" : ", ") + name;
      fail(pair.second, "unknown key `" + key + "`" + (path.empty() ? "" : " in " + path) +
                            "; expected one of " + expected);
    }
  }

  std::optional<std::string> name_field(const YAML::Node& node, const std::string& path,
                                        const std::string& example) {
    if (!node.IsScalar() || !is_safe_name(node.Scalar())) {
      fail(node, path + " must be a name of letters, digits, `_`, `-` or `.` (at most " +
                     std::to_string(kMaxNameLength) + "), e.g. `" + example + "`");
      return std::nullopt;
    }
    return node.Scalar();
  }

  std::optional<long long> integer_field(const YAML::Node& node, const std::string& path, long long minimum,
                                         const std::string& example) {
    const auto value = parse_integer(node);
    if (!value || *value < minimum || *value > 1'000'000'000) {
      fail(node, path + " must be a " + (minimum > 0 ? "positive" : "non-negative") + " integer, e.g. `" +
                     example + "`");
      return std::nullopt;
    }
    return value;
  }

  bool map_field(const YAML::Node& node, const std::string& path, const std::string& example) {
    if (node.IsMap() || node.IsNull()) return true;
    fail(node, path + " must be a map, e.g. `" + example + "`");
    return false;
  }

  bool failed() const { return !errors_.empty(); }

  Result<Topology> finish(Topology topology) {
    if (errors_.empty()) return topology;
    std::string message;
    for (const auto& error : errors_) message += (message.empty() ? "" : "\n") + error;
    return make_error(Errc::invalid_argument, message);
  }

 private:
  const Locator& locator_;
  std::vector<std::string> errors_;
};

}  // namespace drk::runtime
