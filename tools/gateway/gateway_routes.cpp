#include "tools/gateway/gateway_routes.h"

namespace drk::gateway {
namespace {

using runtime::http::HttpRequest;
using runtime::http::HttpResponse;
using runtime::http::PathParameters;

HttpResponse response_of(const Answer& answer) {
  auto response = HttpResponse::json(answer.status, json_text(answer.body));
  if (answer.retry_after) response.headers.emplace_back("Retry-After", std::to_string(answer.retry_after->count()));
  return response;
}

// The request's body as JSON, or the 400 that says why not.
std::optional<Json> body_of(const HttpRequest& request, HttpResponse& refused) {
  Json body = Json::parse(request.body, nullptr, false);
  if (body.is_discarded()) {
    refused = HttpResponse::error(400, "the request's body is not JSON");
    return std::nullopt;
  }
  return body;
}

}  // namespace

runtime::http::Router gateway_router(Gateway& gateway) {
  runtime::http::Router router;
  auto with_body = [&gateway](Answer (Gateway::*submit)(const Json&)) {
    return [&gateway, submit](const HttpRequest& request, const PathParameters&) {
      HttpResponse refused;
      auto body = body_of(request, refused);
      return body ? response_of((gateway.*submit)(*body)) : refused;
    };
  };
  auto by_id = [&gateway](Answer (Gateway::*answer)(const std::string&)) {
    return [&gateway, answer](const HttpRequest&, const PathParameters& parameters) {
      return response_of((gateway.*answer)(parameters.at("id")));
    };
  };
  auto plain = [&gateway](Answer (Gateway::*answer)()) {
    return [&gateway, answer](const HttpRequest&, const PathParameters&) { return response_of((gateway.*answer)()); };
  };
  router.add("POST", "/evaluate", with_body(&Gateway::submit));
  router.add("POST", "/evaluate/batch", with_body(&Gateway::submit_batch));
  router.add("GET", "/status/{id}", by_id(&Gateway::status));
  router.add("GET", "/results/stream", [&gateway](const HttpRequest&, const PathParameters&) {
    HttpResponse response;
    response.events = gateway.subscribe();
    return response;
  });
  router.add("GET", "/results/{id}", by_id(&Gateway::result));
  router.add("DELETE", "/tasks/{id}", by_id(&Gateway::cancel));
  router.add("GET", "/health", plain(&Gateway::health));
  router.add("GET", "/queue/status", plain(&Gateway::queue_status));
  router.add("GET", "/workers/status", plain(&Gateway::workers_status));
  router.add("GET", "/metrics", [&gateway](const HttpRequest&, const PathParameters&) {
    HttpResponse response;
    response.content_type = "text/plain; version=0.0.4; charset=utf-8";
    response.body = gateway.metrics();
    return response;
  });
  return router;
}

}  // namespace drk::gateway
