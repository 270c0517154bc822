// The HTTP server of runtime/http/ over real loopback connections: routing (parameters, 404, 405),
// the body limit (413), bearer tokens (401 without, 200 with) and the policy that requires one
// beyond loopback, server-sent events delivered as they are published.
#include <cstdlib>
#include <memory>
#include <string>

#include "runtime/http/bearer_auth.h"
#include "runtime/http/event_stream.h"
#include "runtime/http/http_server.h"
#include "tests/doctest_drk.h"
#include "tests/support/http_test_client.h"
#include "tests/support/run_dir.h"

namespace {

using drk::runtime::http::EventStream;
using drk::runtime::http::HttpRequest;
using drk::runtime::http::HttpResponse;
using drk::runtime::http::HttpServer;
using drk::runtime::http::HttpServerOptions;
using drk::runtime::http::PathParameters;
using drk::runtime::http::Router;
using drk::testing::http_request;

Router echo_router() {
  Router router;
  router.add("GET", "/status/{id}", [](const HttpRequest&, const PathParameters& parameters) {
    return HttpResponse::json(200, "{\"id\":\"" + parameters.at("id") + "\"}");
  });
  router.add("POST", "/evaluate", [](const HttpRequest& request, const PathParameters&) {
    return HttpResponse::json(200, std::to_string(request.body.size()));
  });
  return router;
}

std::unique_ptr<HttpServer> start(HttpServerOptions options, Router router) {
  auto server = HttpServer::start(options, std::move(router));
  DRK_REQUIRE_MESSAGE(server.ok(), (server ? "" : server.error().message));
  return std::move(*server);
}

}  // namespace

DRK_TEST_CASE("a request reaches the handler of its method and path, with the path's parameters") {
  auto server = start({}, echo_router());
  auto status = http_request(server->port(), "GET", "/status/abc-1");
  DRK_CHECK(status.status == 200);
  DRK_CHECK(status.body == "{\"id\":\"abc-1\"}");
  DRK_CHECK(http_request(server->port(), "POST", "/evaluate", "12345").body == "5");
  DRK_CHECK(http_request(server->port(), "GET", "/nothing/here").status == 404);
  auto wrong_method = http_request(server->port(), "DELETE", "/evaluate");
  DRK_CHECK(wrong_method.status == 405);
  DRK_CHECK(wrong_method.header("Allow") == "POST");
}

DRK_TEST_CASE("a body beyond the limit is answered 413, one within it is served") {
  HttpServerOptions options;
  options.limits.max_body_bytes = 1000;
  auto server = start(options, echo_router());
  auto refused = http_request(server->port(), "POST", "/evaluate", std::string(5000, 'x'));
  DRK_CHECK(refused.status == 413);
  DRK_CHECK(refused.body.find("limit of 1000 bytes") != std::string::npos);
  DRK_CHECK(http_request(server->port(), "POST", "/evaluate", std::string(1000, 'x')).status == 200);
}

DRK_TEST_CASE("with a bearer token, a request without it is answered 401 and one with it is served") {
  HttpServerOptions options;
  options.bearer_token = "s3cret";
  auto server = start(options, echo_router());
  auto refused = http_request(server->port(), "GET", "/status/x");
  DRK_CHECK(refused.status == 401);
  DRK_CHECK(refused.header("WWW-Authenticate") == "Bearer");
  DRK_CHECK(http_request(server->port(), "GET", "/status/x", "", "wrong!").status == 401);
  DRK_CHECK(http_request(server->port(), "GET", "/status/x", "", "s3cret").status == 200);
}

// A browser's page and its EventSource cannot send a header: the token in the address's query.
DRK_TEST_CASE("with a bearer token, a request may carry it as the query's token parameter") {
  HttpServerOptions options;
  options.bearer_token = "s3cret";
  auto server = start(options, echo_router());
  DRK_CHECK(http_request(server->port(), "GET", "/status/x?token=s3cret").status == 200);
  DRK_CHECK(http_request(server->port(), "GET", "/status/x?view=all&token=s3cret").status == 200);
  DRK_CHECK(http_request(server->port(), "GET", "/status/x?token=s3cre").status == 401);
  DRK_CHECK(http_request(server->port(), "GET", "/status/x?token=s3cretX").status == 401);
  DRK_CHECK(http_request(server->port(), "GET", "/status/x?xtoken=s3cret").status == 401);
  DRK_CHECK(http_request(server->port(), "GET", "/status/x?token=").status == 401);
}

DRK_TEST_CASE("a server beyond loopback needs a token; on loopback it is optional") {
  using drk::runtime::http::required_token;
  DRK_CHECK(drk::runtime::http::is_loopback_address("127.0.0.1"));
  DRK_CHECK(drk::runtime::http::is_loopback_address("127.8.0.3"));
  DRK_CHECK(drk::runtime::http::is_loopback_address("::1"));
  DRK_CHECK(drk::runtime::http::is_loopback_address("localhost"));
  DRK_CHECK_FALSE(drk::runtime::http::is_loopback_address("0.0.0.0"));
  DRK_CHECK_FALSE(drk::runtime::http::is_loopback_address("10.1.2.3"));
  DRK_CHECK_FALSE(drk::runtime::http::is_loopback_address("::"));

  auto open = required_token("0.0.0.0", std::nullopt, "set $TOKEN");
  DRK_REQUIRE_FALSE(open.ok());
  DRK_CHECK(open.error().message.find("set $TOKEN") != std::string::npos);
  auto given = required_token("0.0.0.0", std::string("t"), "set $TOKEN");
  DRK_REQUIRE(given.ok());
  DRK_CHECK(**given == "t");
  auto loopback = required_token("127.0.0.1", std::nullopt, "set $TOKEN");
  DRK_REQUIRE(loopback.ok());
  DRK_CHECK_FALSE(loopback->has_value());
}

DRK_TEST_CASE("a bearer token comes from its file, else from the environment; an empty one is refused") {
  using drk::runtime::http::read_bearer_token;
  drk::testing::RunDir dir;
  ::setenv("DRK_HTTP_TEST_TOKEN", " from-env\n", 1);
  auto from_file = read_bearer_token(dir.write("token", "from-file\n"), "DRK_HTTP_TEST_TOKEN");
  DRK_REQUIRE(from_file.ok());
  DRK_CHECK(**from_file == "from-file");
  auto from_env = read_bearer_token("", "DRK_HTTP_TEST_TOKEN");
  DRK_REQUIRE(from_env.ok());
  DRK_CHECK(**from_env == "from-env");
  DRK_CHECK_FALSE(read_bearer_token(dir.write("empty", "\n"), "DRK_HTTP_TEST_TOKEN").ok());
  DRK_CHECK_FALSE(read_bearer_token(dir.file("absent"), "DRK_HTTP_TEST_TOKEN").ok());
  ::unsetenv("DRK_HTTP_TEST_TOKEN");
  auto none = read_bearer_token("", "DRK_HTTP_TEST_TOKEN");
  DRK_REQUIRE(none.ok());
  DRK_CHECK_FALSE(none->has_value());
}

DRK_TEST_CASE("a stream delivers each event published after the client connected, until it closes") {
  auto events = std::make_shared<EventStream>();
  Router router;
  router.add("GET", "/stream", [events](const HttpRequest&, const PathParameters&) {
    HttpResponse response;
    response.events = events;
    events->publish("hello", "connected");
    return response;
  });
  auto server = start({}, std::move(router));
  drk::testing::SseTestClient client(server->port(), "/stream");
  DRK_CHECK(client.status_line() == "HTTP/1.1 200 OK");
  DRK_CHECK(client.next_event() == std::optional<std::string>("connected"));
  events->publish("result", "{\"id\":\"a\"}\nsecond line");
  DRK_CHECK(client.next_event() == std::optional<std::string>("{\"id\":\"a\"}\nsecond line"));
  events->close();
  DRK_CHECK_FALSE(client.next_event().has_value());
}
