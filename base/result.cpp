#include "base/result.h"

namespace drk {

std::string_view errc_name(Errc code) {
  switch (code) {
    case Errc::invalid_argument: return "invalid_argument";
    case Errc::not_found: return "not_found";
    case Errc::parse_error: return "parse_error";
    case Errc::compile_error: return "compile_error";
    case Errc::io_error: return "io_error";
    case Errc::timeout: return "timeout";
    case Errc::busy: return "busy";
    case Errc::peer_unavailable: return "peer_unavailable";
    case Errc::sandbox_crashed: return "sandbox_crashed";
    case Errc::protocol_error: return "protocol_error";
    case Errc::unsupported: return "unsupported";
    case Errc::internal: return "internal";
  }
  return "unknown";
}

std::string Error::describe() const { return std::string(errc_name(code)) + ": " + message; }

}  // namespace drk
