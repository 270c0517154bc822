// One HTTP/1.1 request (a POST unless `method` says otherwise) on a connection of its own
// (Boost.Beast; TLS through OpenSSL for https): connect, send, read the answer, close. Every step
// ends by `deadline`; the connection is never reused (an answer of a language model takes
// seconds: a new connection costs nothing beside it).
//
// Streaming: while a 2xx answer's body arrives, `on_body` gets each new piece as it is read
// (a server-sent event stream is read as it comes, not after the end). The whole body is in the
// HttpResponse too.
//
// TLS: the server's certificate is checked against the system's store (or `ca_file`) and the
// host name (an IP address as such); SNI is sent.
//
// Errors (values, never exceptions): timeout (the deadline passed), peer_unavailable (refused,
// reset, or the connection closed before the answer ended), protocol_error (bytes that are not
// HTTP, a body over `max_body_bytes`), io_error (TLS set-up, e.g. an unreadable ca_file),
// invalid_argument (the server's certificate is refused: not trusted, expired, or not issued for
// the host; the message says which and what to set).
// A status other than 2xx is not an error here: the HttpResponse carries it.
// Thread-safety: a free function; concurrent calls share nothing.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "runtime/http_client/http_url.h"

namespace drk::http_client {

struct HttpRequest {
  std::string target;  // the path, e.g. "/v1/chat/completions"
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;  // e.g. {"Authorization", "Bearer ..."}
  std::string method = "POST";  // or GET, DELETE...
};

struct HttpResponse {
  unsigned status = 0;
  std::string body;
  std::optional<std::string> retry_after;  // the Retry-After header, as sent
};

struct ExchangeOptions {
  std::chrono::steady_clock::time_point deadline;
  size_t max_body_bytes = 64u << 20;
  std::string ca_file;  // https: the certificates to trust; empty: the system's
  std::function<void(std::string_view piece)> on_body;
};

Result<HttpResponse> http_exchange(const HttpUrl& url, const HttpRequest& request, const ExchangeOptions& options);

}  // namespace drk::http_client
