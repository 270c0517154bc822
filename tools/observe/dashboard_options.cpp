#include "tools/observe/dashboard_options.h"

#include <charconv>

#include "runtime/http/bearer_auth.h"

namespace drk::observe {

Result<DashboardOptions> parse_dashboard_address(const std::string& text) {
  const auto refused = [&text](const std::string& why) {
    return make_error(Errc::invalid_argument, "--dashboard '" + text + "': " + why +
                                                  " (give [ADDR:]PORT, e.g. 8080, 127.0.0.1:0 or 0.0.0.0:8080)");
  };
  DashboardOptions options;
  std::string port = text;
  if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
    std::string host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.find(':') != std::string::npos && text.front() != '[') return refused("an IPv6 address goes in brackets");
    if (!host.empty()) options.address = host;
  }
  unsigned value = 0;
  const auto parsed = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || parsed.ec != std::errc() || parsed.ptr != port.data() + port.size() || value > 65535)
    return refused("'" + port + "' is not a port (0 to 65535)");
  options.port = static_cast<uint16_t>(value);
  return options;
}

Result<DashboardOptions> dashboard_options(const std::string& address, const std::string& token_file) {
  auto options = parse_dashboard_address(address);
  if (!options) return options.error();
  auto token = runtime::http::read_bearer_token(token_file, kDashboardTokenVariable);
  if (!token) return token.error();
  auto required = runtime::http::required_token(
      options->address, *token,
      std::string("give --dashboard-token-file FILE or set $") + kDashboardTokenVariable);
  if (!required) return required.error();
  options->bearer_token = *required;
  return options;
}

std::string dashboard_url(const std::string& host, uint16_t port) {
  const bool ipv6 = host.find(':') != std::string::npos;
  return "http://" + (ipv6 ? "[" + host + "]" : host) + ":" + std::to_string(port) + "/";
}

}  // namespace drk::observe
