// RetryPolicy: which failed attempts of an HTTP request are tried again, and after how long.
// Tried again: 429 and 5xx answers and a connection refused or dropped (Errc::peer_unavailable);
// nothing else (a 4xx is the request's fault, a passed deadline ends the request).
// The wait before attempt n+1 is the answer's Retry-After when it gives one (delta-seconds),
// else exponential backoff with jitter: d = min(max_delay, base_delay * 2^(n-1)), waited as
// d/2 + uniform[0, d/2] ("equal jitter": clients that failed together do not retry together).
// Thread-safety: a value; backoff() takes the random source from its caller.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string_view>

#include "base/result.h"
#include "runtime/http_client/http_exchange.h"

namespace drk::http_client {

struct RetryPolicy {
  uint32_t attempts = 4;  // in all, the first included
  std::chrono::milliseconds base_delay{500};
  std::chrono::milliseconds max_delay{30000};

  // Whether this outcome of an attempt is worth another.
  static bool retryable(const Result<HttpResponse>& outcome);
  // The wait after failed attempt `attempt` (1-based) that answered `outcome`.
  std::chrono::milliseconds backoff(uint32_t attempt, const Result<HttpResponse>& outcome, std::mt19937_64& random) const;
};

// Retry-After's delta-seconds ("120"); nullopt for anything else (an HTTP date is not honoured:
// the backoff applies).
std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value);

}  // namespace drk::http_client
