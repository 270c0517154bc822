#include "runtime/nodes/slurm_hostlist.h"

#include <charconv>

namespace drk::runtime {
namespace {

Error bad_list(std::string_view hostlist, const std::string& what) {
  return make_error(Errc::invalid_argument,
                    "the Slurm host list '" + std::string(hostlist) + "' " + what +
                        " (expected names like gpu[01-03,07],cpu1, as SLURM_JOB_NODELIST holds them)");
}

// The top-level comma-separated parts of `hostlist`: commas inside brackets do not separate.
Result<std::vector<std::string_view>> split_hosts(std::string_view hostlist) {
  std::vector<std::string_view> parts;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= hostlist.size(); ++i) {
    const char c = i < hostlist.size() ? hostlist[i] : ',';
    if (c == '[') {
      if (++depth > 1) return bad_list(hostlist, "nests a bracket inside another");
    } else if (c == ']') {
      if (--depth < 0) return bad_list(hostlist, "closes a bracket it did not open");
    } else if (c == ',' && depth == 0) {
      if (i == start) return bad_list(hostlist, "has an empty name");
      parts.push_back(hostlist.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) return bad_list(hostlist, "leaves a bracket open");
  return parts;
}

Result<unsigned long> number_of(std::string_view text, std::string_view hostlist) {
  unsigned long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return bad_list(hostlist, "has '" + std::string(text) + "' where a number belongs");
  }
  return value;
}

// The suffixes one bracket's body stands for: "01-03,7" -> 01 02 03 7.
Result<std::vector<std::string>> expand_ranges(std::string_view body, std::string_view hostlist) {
  std::vector<std::string> values;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= body.size(); ++i) {
    if (i < body.size() && body[i] != ',') continue;
    const std::string_view range = body.substr(start, i - start);
    start = i + 1;
    const auto dash = range.find('-');
    const std::string_view low_text = range.substr(0, dash);
    const std::string_view high_text = dash == std::string_view::npos ? low_text : range.substr(dash + 1);
    auto low = number_of(low_text, hostlist);
    if (!low) return low.error();
    auto high = number_of(high_text, hostlist);
    if (!high) return high.error();
    if (*high < *low) return bad_list(hostlist, "has the range '" + std::string(range) + "', which runs backwards");
    if (*high - *low >= kMaxHostlistHosts) return bad_list(hostlist, "names more than 65536 hosts");
    for (unsigned long value = *low; value <= *high; ++value) {
      std::string digits = std::to_string(value);
      if (digits.size() < low_text.size()) digits.insert(0, low_text.size() - digits.size(), '0');
      values.push_back(std::move(digits));
    }
  }
  return values;
}

// One host expression ("rack[1-2]-n[1-2]") into its hosts, appended to `hosts`.
Status expand_one(std::string_view expression, std::string_view hostlist, std::vector<std::string>& hosts) {
  std::vector<std::string> names{""};
  std::size_t at = 0;
  while (at < expression.size()) {
    const auto open = expression.find('[', at);
    const std::string_view literal = expression.substr(at, open - at);
    for (auto& name : names) name += literal;
    if (open == std::string_view::npos) break;
    const auto close = expression.find(']', open);
    auto values = expand_ranges(expression.substr(open + 1, close - open - 1), hostlist);
    if (!values) return values.error();
    std::vector<std::string> longer;
    for (const auto& name : names) {
      for (const auto& value : *values) {
        if (longer.size() + hosts.size() >= kMaxHostlistHosts) return bad_list(hostlist, "names more than 65536 hosts");
        longer.push_back(name + value);
      }
    }
    names = std::move(longer);
    at = close + 1;
  }
  hosts.insert(hosts.end(), names.begin(), names.end());
  return {};
}

}  // namespace

Result<std::vector<std::string>> expand_hostlist(std::string_view hostlist) {
  auto parts = split_hosts(hostlist);
  if (!parts) return parts.error();
  std::vector<std::string> hosts;
  for (std::string_view part : *parts) {
    if (auto expanded = expand_one(part, hostlist, hosts); !expanded) return expanded.error();
  }
  return hosts;
}

}  // namespace drk::runtime
