// Where and how the dashboard service (dashboard_service.h) listens, from the command line:
// `--dashboard [ADDR:]PORT`, where `8080` and `:8080` are loopback (127.0.0.1), `0.0.0.0:8080`
// every interface, `[::1]:8080` an IPv6 address, and port 0 a free port; and the bearer token,
// from `--dashboard-token-file FILE` or $DRK_DASHBOARD_TOKEN, which a dashboard listening beyond
// loopback requires (runtime/http/bearer_auth.h, as `drk serve` does).
//
// Thread-safety: pure functions (dashboard_options reads the file and the environment).
// Errors: invalid_argument naming the text and the form; the token's errors as bearer_auth.h's.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "base/result.h"

namespace drk::observe {

inline constexpr const char* kDashboardTokenVariable = "DRK_DASHBOARD_TOKEN";

struct DashboardOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: a free port
  std::optional<std::string> bearer_token;
  std::chrono::milliseconds check_every{500};
};

// The address and port of `[ADDR:]PORT`, no token.
Result<DashboardOptions> parse_dashboard_address(const std::string& text);

// The address of `[ADDR:]PORT` with the token of `token_file` (when not empty) or of
// $DRK_DASHBOARD_TOKEN; an error when it listens beyond loopback without one.
Result<DashboardOptions> dashboard_options(const std::string& address, const std::string& token_file);

// http://HOST:PORT/ (an IPv6 host in brackets).
std::string dashboard_url(const std::string& host, uint16_t port);

}  // namespace drk::observe
