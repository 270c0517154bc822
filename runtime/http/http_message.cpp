#include "runtime/http/http_message.h"

#include <nlohmann/json.hpp>

namespace drk::runtime::http {

const std::string& HttpRequest::header(const std::string& name) const {
  static const std::string kAbsent;
  auto found = headers.find(name);
  return found == headers.end() ? kAbsent : found->second;
}

HttpResponse HttpResponse::error(unsigned status, const std::string& message) {
  nlohmann::ordered_json body = {{"error", message}, {"detail", message}};
  // Bytes that are not UTF-8 (a client's id echoed back) become U+FFFD rather than an exception.
  return json(status, body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

HttpResponse HttpResponse::json(unsigned status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

}  // namespace drk::runtime::http
