// HttpServer: an HTTP/1.1 server (Boost.Beast on Boost.Asio) that answers each request with its
// Router's handler, on a pool of threads. Each connection is bounded by RequestLimits (413 for a
// body beyond its bound, 431 for a header, a closed connection for a read or write past its
// timeout); with a bearer token (bearer_auth.h) every request without it is answered 401. An
// answer carrying an EventStream is written as server-sent events until the stream closes.
//
// Thread-safety: start() and the destructor from one thread; handlers run on the server's threads,
// several at once. Ownership: the server owns its threads and sockets; destroying it stops
// accepting, closes every connection (streams included) and joins the threads. Errors: start()
// returns io_error naming the address and port it could not bind.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/result.h"
#include "runtime/http/request_limits.h"
#include "runtime/http/router.h"

namespace drk::runtime::http {

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;  // 0: a free port (port() says which)
  size_t threads = 2;
  RequestLimits limits;
  std::optional<std::string> bearer_token;  // required_token()'s answer
};

class HttpServer {
 public:
  static Result<std::unique_ptr<HttpServer>> start(const HttpServerOptions& options, Router router);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  uint16_t port() const;

 private:
  struct State;
  explicit HttpServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace drk::runtime::http
