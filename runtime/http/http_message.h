// The requests and answers an HTTP server's handlers see (runtime/http/router.h): plain values,
// free of Boost.Beast, so that a service's code does not compile the HTTP library.
// An answer is whole (status, headers, body), or a stream of server-sent events: the server writes
// its headers, then each event the EventStream is given, until the stream is closed or the client
// leaves.
//
// Thread-safety: plain values; an EventStream is shared (runtime/http/event_stream.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace drk::runtime::http {

class EventStream;

struct HttpRequest {
  std::string method;  // GET, POST, DELETE...
  std::string path;    // the target without its query: /status/abc
  std::string query;   // after '?', undecoded; empty when none
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;

  // The header `name` (lower case), or "" when absent.
  const std::string& header(const std::string& name) const;
};

struct HttpResponse {
  unsigned status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;  // beyond Content-Type and Content-Length
  std::shared_ptr<EventStream> events;  // set: a text/event-stream answer; `body` is not sent

  // An answer of `status` with a JSON body {"error": message} (KernelGYM's clients read "detail";
  // both are set).
  static HttpResponse error(unsigned status, const std::string& message);
  static HttpResponse json(unsigned status, std::string body);
};

}  // namespace drk::runtime::http
