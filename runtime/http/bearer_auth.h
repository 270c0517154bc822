// Bearer-token authentication of an HTTP server, and the policy of when it is required: a server
// that listens beyond loopback (any address but 127.0.0.0/8, ::1 and "localhost") refuses to start
// without a token; on loopback a token is optional. With a token, every request must carry
// `Authorization: Bearer TOKEN`, or `token=TOKEN` in its query (a browser's page and its
// EventSource cannot send a header), or is answered 401.
//
// Thread-safety: pure functions. Errors: values naming the input and the fix.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"

namespace drk::runtime::http {

// Whether `address` (a numeric IPv4/IPv6 address or a host name) is this machine's loopback.
bool is_loopback_address(const std::string& address);

// The token the server at `listen_address` requires: `token` as given, or an error when it listens
// beyond loopback without one (naming `token_source_hint`, how to give one).
Result<std::optional<std::string>> required_token(const std::string& listen_address,
                                                  std::optional<std::string> token,
                                                  const std::string& token_source_hint);

// The token from the file `token_file` (when not empty), else from the environment variable
// `environment_variable`, else none. Surrounding white space is dropped; an empty token or an
// unreadable file is an error naming it.
Result<std::optional<std::string>> read_bearer_token(const std::string& token_file,
                                                     const std::string& environment_variable);

// Whether an `Authorization` header's value carries `token` (compared in constant time).
bool bearer_authorized(std::string_view authorization, const std::string& token);

// Whether a request's query (after '?', undecoded) has a `token` parameter equal to `token`
// (compared in constant time; a token with characters a URL must escape is not matched).
bool query_token_authorized(std::string_view query, const std::string& token);

}  // namespace drk::runtime::http
