#include "runtime/http_client/retry_policy.h"

#include <algorithm>
#include <charconv>

namespace drk::http_client {

bool RetryPolicy::retryable(const Result<HttpResponse>& outcome) {
  if (!outcome) return outcome.error().code == Errc::peer_unavailable;
  return outcome->status == 429 || outcome->status / 100 == 5;
}

std::chrono::milliseconds RetryPolicy::backoff(uint32_t attempt, const Result<HttpResponse>& outcome,
                                               std::mt19937_64& random) const {
  if (outcome && outcome->retry_after) {
    if (auto asked = parse_retry_after(*outcome->retry_after)) return *asked;
  }
  const uint32_t doublings = std::min<uint32_t>(attempt > 0 ? attempt - 1 : 0, 30);
  const auto grown = base_delay.count() * (int64_t{1} << doublings);
  const int64_t delay = std::min<int64_t>(grown, max_delay.count());
  std::uniform_int_distribution<int64_t> jitter(0, delay / 2);
  return std::chrono::milliseconds(delay - delay / 2 + jitter(random));
}

std::optional<std::chrono::milliseconds> parse_retry_after(std::string_view value) {
  while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ') value.remove_suffix(1);
  uint32_t seconds = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), seconds);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) return std::nullopt;
  return std::chrono::milliseconds(int64_t{seconds} * 1000);
}

}  // namespace drk::http_client
