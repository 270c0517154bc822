// A blocking HTTP/1.1 client for tests (Boost.Beast): one request per connection, or a stream of
// server-sent events read event by event. Bounded waits: every read and write times out, so a
// test against a server that does not answer fails rather than hangs.
//
// Thread-safety: one thread per object.
#pragma once

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace drk::testing {

struct HttpAnswer {
  unsigned status = 0;  // 0: no answer (connection refused, closed or timed out)
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;

  std::string header(const std::string& name) const {
    for (const auto& [key, value] : headers)
      if (boost::beast::iequals(key, name)) return value;
    return "";
  }
};

inline constexpr std::chrono::seconds kHttpTestTimeout{60};

inline HttpAnswer http_request(uint16_t port, const std::string& method, const std::string& target,
                               const std::string& body = "", const std::string& bearer = "",
                               std::chrono::milliseconds timeout = kHttpTestTimeout) {
  namespace asio = boost::asio;
  namespace beast = boost::beast;
  namespace http = boost::beast::http;
  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code error;
  stream.expires_after(timeout);
  stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port), error);
  if (error) return {};
  http::request<http::string_body> request(http::string_to_verb(method), target, 11);
  request.set(http::field::host, "127.0.0.1");
  request.set(http::field::content_type, "application/json");
  if (!bearer.empty()) request.set(http::field::authorization, "Bearer " + bearer);
  request.body() = body;
  request.prepare_payload();
  http::write(stream, request, error);
  if (error) return {};
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(stream, buffer, parser, error);
  if (error) return {};
  HttpAnswer answer;
  answer.status = parser.get().result_int();
  answer.body = parser.get().body();
  for (const auto& field : parser.get()) answer.headers.emplace_back(field.name_string(), field.value());
  return answer;
}

// A GET of a text/event-stream; next_event() returns each event's data (nullopt at the end or on
// timeout).
class SseTestClient {
 public:
  SseTestClient(uint16_t port, const std::string& target, std::chrono::milliseconds timeout = kHttpTestTimeout)
      : stream_(io_), timeout_(timeout) {
    namespace http = boost::beast::http;
    boost::beast::error_code error;
    stream_.expires_after(timeout_);
    stream_.connect(boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port), error);
    if (error) return;
    http::request<http::empty_body> request(http::verb::get, target, 11);
    request.set(http::field::host, "127.0.0.1");
    http::write(stream_, request, error);
    if (error) return;
    // The header ends at the first empty line; what follows it is the events.
    std::string header;
    while (header.find("\r\n\r\n") == std::string::npos) {
      char byte;
      if (boost::asio::read(stream_, boost::asio::buffer(&byte, 1), error) != 1) return;
      header += byte;
    }
    status_line_ = header.substr(0, header.find("\r\n"));
  }

  const std::string& status_line() const { return status_line_; }

  std::optional<std::string> next_event() {
    boost::beast::error_code error;
    while (true) {
      const size_t end = pending_.find("\n\n");
      if (end != std::string::npos) {
        std::string event = pending_.substr(0, end);
        pending_.erase(0, end + 2);
        std::string data;
        size_t start = 0;
        while (start < event.size()) {
          size_t line_end = event.find('\n', start);
          if (line_end == std::string::npos) line_end = event.size();
          const std::string line = event.substr(start, line_end - start);
          if (line.rfind("data: ", 0) == 0) data += (data.empty() ? "" : "\n") + line.substr(6);
          start = line_end + 1;
        }
        return data;
      }
      char chunk[4096];
      stream_.expires_after(timeout_);
      const size_t read = stream_.read_some(boost::asio::buffer(chunk), error);
      if (error) return std::nullopt;
      pending_.append(chunk, read);
    }
  }

 private:
  boost::asio::io_context io_;
  boost::beast::tcp_stream stream_;
  std::chrono::milliseconds timeout_;
  std::string status_line_;
  std::string pending_;
};

}  // namespace drk::testing
