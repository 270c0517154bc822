#include "runtime/http_client/http_url.h"

#include <charconv>

namespace drk::http_client {

std::string HttpUrl::base() const {
  std::string path_part = path;
  while (!path_part.empty() && path_part.back() == '/') path_part.pop_back();
  const bool ipv6 = host.find(':') != std::string::npos;
  return std::string(tls ? "https://" : "http://") + (ipv6 ? "[" + host + "]" : host) + ":" + port + path_part;
}

Result<HttpUrl> parse_http_url(std::string_view text) {
  const auto refuse = [&](const std::string& why) {
    return make_error(Errc::invalid_argument, "address '" + std::string(text) + "' " + why +
                                                  " (write it as http://HOST:PORT/PATH or https://HOST/PATH, "
                                                  "e.g. http://127.0.0.1:8000/v1)");
  };
  HttpUrl url;
  std::string_view rest = text;
  if (rest.rfind("https://", 0) == 0) {
    url.tls = true;
    rest.remove_prefix(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest.remove_prefix(7);
  } else {
    return refuse("is neither http:// nor https://");
  }
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  url.path = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (url.path.find_first_of("?#") != std::string::npos) return refuse("has a query or fragment");
  if (authority.find('@') != std::string_view::npos) return refuse("holds credentials (give the API key apart)");
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return refuse("has an unclosed '['");
    url.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return refuse("has text after its IPv6 address");
      port = after.substr(1);
    }
  } else {
    const size_t colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) port = authority.substr(colon + 1);
  }
  if (url.host.empty()) return refuse("has no host");
  if (port.empty()) {
    url.port = url.tls ? "443" : "80";
  } else {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
    if (error != std::errc() || end != port.data() + port.size() || value == 0 || value > 65535)
      return refuse("has port '" + std::string(port) + "', not a number from 1 to 65535");
    url.port = std::string(port);
  }
  return url;
}

}  // namespace drk::http_client
