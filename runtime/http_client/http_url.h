// HttpUrl: an http:// or https:// address split into what a connection needs (scheme, host,
// port, path). parse_http_url() refuses anything else (another scheme, no host, a bad port)
// with a message that names the address and shows a good one.
// Thread-safety: values and a pure function.
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace drk::http_client {

struct HttpUrl {
  bool tls = false;        // https
  std::string host;        // a name or an address; IPv6 without its brackets
  std::string port;        // "80", "443" or the one given
  std::string path = "/";  // the path, never empty; no query

  // "http://host:port/path" without a trailing slash on the path: a base to append "/chat/completions" to.
  std::string base() const;
};

Result<HttpUrl> parse_http_url(std::string_view text);

}  // namespace drk::http_client
