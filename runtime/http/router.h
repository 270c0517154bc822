// Router: which handler answers a request, by method and path pattern. A pattern's segments are
// literal (`/queue/status`) or a parameter in braces (`/status/{id}`) that matches one non-empty
// segment, handed to the handler by name. A path no pattern matches is answered 404; a path that
// matches with another method, 405 with `Allow`.
//
// Thread-safety: add() before the server starts; dispatch() from any thread (handlers must be
// thread-safe themselves). Errors: a handler's expected failures are its answers (4xx); an
// exception from a handler is answered 500 with its message.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/http/http_message.h"

namespace drk::runtime::http {

using PathParameters = std::map<std::string, std::string>;
using Handler = std::function<HttpResponse(const HttpRequest&, const PathParameters&)>;

class Router {
 public:
  void add(std::string method, const std::string& pattern, Handler handler);
  HttpResponse dispatch(const HttpRequest& request) const;

 private:
  struct Route {
    std::string method;
    std::vector<std::string> segments;  // "{id}" for a parameter
    Handler handler;
  };
  std::vector<Route> routes_;
};

}  // namespace drk::runtime::http
