// HttpClient: POSTs with retries. Each attempt is one http_exchange(); a failed attempt that
// RetryPolicy::retryable() accepts is tried again after RetryPolicy::backoff(), as long as the
// wait ends before the request's deadline (one deadline for all attempts: by then the request
// has its answer or its failure).
//
// The outcome: the first answer that is not retried (any status: the caller reads it), or the
// last failure, whose message says how many attempts were made. A 429 or 5xx that is still
// failing when the attempts run out comes back as that answer.
// Streaming: `on_body` gets (piece, attempt); a new attempt number means the pieces before it
// belong to a failed attempt and are to be dropped.
//
// Seam: `wait` is how the client waits between attempts (a sleep; tests record the waits).
// Thread-safety: post() may be called from many threads at once (the random source is locked).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <string_view>

#include "runtime/http_client/http_exchange.h"
#include "runtime/http_client/http_url.h"
#include "runtime/http_client/retry_policy.h"

namespace drk::http_client {

using Wait = std::function<void(std::chrono::milliseconds)>;

struct PostOptions {
  std::chrono::steady_clock::time_point deadline;
  std::function<void(std::string_view piece, uint32_t attempt)> on_body;
};

class HttpClient {
 public:
  HttpClient(HttpUrl url, RetryPolicy retry, std::string ca_file = {}, Wait wait = {}, uint64_t jitter_seed = 1);

  Result<HttpResponse> post(const HttpRequest& request, const PostOptions& options);

  const HttpUrl& url() const { return url_; }

 private:
  std::chrono::milliseconds next_wait(uint32_t attempt, const Result<HttpResponse>& outcome);

  HttpUrl url_;
  RetryPolicy retry_;
  std::string ca_file_;
  Wait wait_;
  std::mutex random_mutex_;
  std::mt19937_64 random_;
};

}  // namespace drk::http_client
