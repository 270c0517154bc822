// The bounds an HTTP server puts on each connection (runtime/http/http_server.h): what a client may
// send and how long the server waits for it. A request beyond a size bound is answered 413 (body)
// or 431 (header) and its connection closed; a read or a write that outlasts its timeout closes the
// connection without an answer (the client is gone or too slow to serve).
//
// Thread-safety: a plain value.
#pragma once

#include <chrono>
#include <cstddef>

namespace drk::runtime::http {

struct RequestLimits {
  size_t max_body_bytes = 8 << 20;   // a batch of 100 KernelBench sources fits
  size_t max_header_bytes = 16 << 10;
  std::chrono::milliseconds read_timeout{30000};   // one whole request, from its first byte
  std::chrono::milliseconds write_timeout{30000};  // one whole answer (an event of a stream)
  // An idle keep-alive connection waits this long for its next request.
  std::chrono::milliseconds idle_timeout{60000};
};

}  // namespace drk::runtime::http
