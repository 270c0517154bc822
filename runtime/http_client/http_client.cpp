#include "runtime/http_client/http_client.h"

#include <thread>

namespace drk::http_client {

HttpClient::HttpClient(HttpUrl url, RetryPolicy retry, std::string ca_file, Wait wait, uint64_t jitter_seed)
    : url_(std::move(url)),
      retry_(retry),
      ca_file_(std::move(ca_file)),
      wait_(wait ? std::move(wait) : Wait([](std::chrono::milliseconds delay) { std::this_thread::sleep_for(delay); })),
      random_(jitter_seed) {}

std::chrono::milliseconds HttpClient::next_wait(uint32_t attempt, const Result<HttpResponse>& outcome) {
  std::lock_guard lock(random_mutex_);
  return retry_.backoff(attempt, outcome, random_);
}

Result<HttpResponse> HttpClient::post(const HttpRequest& request, const PostOptions& options) {
  const uint32_t attempts = std::max<uint32_t>(retry_.attempts, 1);
  for (uint32_t attempt = 1;; ++attempt) {
    ExchangeOptions exchange;
    exchange.deadline = options.deadline;
    exchange.ca_file = ca_file_;
    if (options.on_body) exchange.on_body = [&](std::string_view piece) { options.on_body(piece, attempt); };
    Result<HttpResponse> outcome = http_exchange(url_, request, exchange);
    if (!RetryPolicy::retryable(outcome)) return outcome;
    const std::string what = outcome ? "answered HTTP " + std::to_string(outcome->status) : outcome.error().describe();
    if (attempt == attempts) {
      if (outcome) return outcome;
      return make_error(outcome.error().code, "after " + std::to_string(attempts) + " attempts: " + what);
    }
    const auto delay = next_wait(attempt, outcome);
    if (std::chrono::steady_clock::now() + delay >= options.deadline) {
      if (outcome) return outcome;
      return make_error(Errc::timeout, "attempt " + std::to_string(attempt) + " failed (" + what +
                                           ") and the next would start after the request's deadline");
    }
    wait_(delay);
  }
}

}  // namespace drk::http_client
