#include "runtime/http/bearer_auth.h"

#include <arpa/inet.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace drk::runtime::http {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

bool is_loopback_address(const std::string& address) {
  if (address == "localhost") return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, address.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (::inet_pton(AF_INET6, address.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

Result<std::optional<std::string>> required_token(const std::string& listen_address,
                                                  std::optional<std::string> token,
                                                  const std::string& token_source_hint) {
  if (token || is_loopback_address(listen_address)) return token;
  return make_error(Errc::invalid_argument, "listening on " + listen_address +
                                                " (beyond loopback) needs a bearer token: " + token_source_hint +
                                                ", or listen on 127.0.0.1");
}

Result<std::optional<std::string>> read_bearer_token(const std::string& token_file,
                                                     const std::string& environment_variable) {
  std::string token;
  std::string source;
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in) return make_error(Errc::io_error, "the token file '" + token_file + "' cannot be read: does it exist?");
    std::ostringstream text;
    text << in.rdbuf();
    token = trimmed(text.str());
    source = "the token file '" + token_file + "'";
  } else if (const char* value = std::getenv(environment_variable.c_str())) {
    token = trimmed(value);
    source = "$" + environment_variable;
  } else {
    return std::optional<std::string>();
  }
  if (token.empty()) return make_error(Errc::invalid_argument, source + " is empty: put the token in it");
  return std::optional<std::string>(token);
}

namespace {

bool same_in_constant_time(std::string_view given, const std::string& token) {
  if (given.size() != token.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < token.size(); ++i) difference |= static_cast<unsigned char>(given[i] ^ token[i]);
  return difference == 0;
}

}  // namespace

bool bearer_authorized(std::string_view authorization, const std::string& token) {
  constexpr std::string_view kScheme = "Bearer ";
  return authorization.substr(0, kScheme.size()) == kScheme &&
         same_in_constant_time(authorization.substr(kScheme.size()), token);
}

bool query_token_authorized(std::string_view query, const std::string& token) {
  constexpr std::string_view kName = "token=";
  while (!query.empty()) {
    const size_t end = query.find('&');
    const std::string_view parameter = query.substr(0, end);
    if (parameter.substr(0, kName.size()) == kName && same_in_constant_time(parameter.substr(kName.size()), token))
      return true;
    query = end == std::string_view::npos ? std::string_view() : query.substr(end + 1);
  }
  return false;
}

}  // namespace drk::runtime::http
