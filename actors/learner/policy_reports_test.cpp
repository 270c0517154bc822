// The external trainer's policy endpoint (policy_reports.h) behind the HTTP server on loopback:
// what a trainer's bad report is told, versions that go back, retries, and the GET that waits
// for a step.
#include "actors/learner/policy_reports.h"

#include <nlohmann/json.hpp>

#include <future>

#include "runtime/http/http_server.h"
#include "tests/doctest_drk.h"
#include "tests/support/http_test_client.h"

namespace {

using drk::learner::PolicyReports;
using drk::testing::http_request;

struct Endpoint {
  PolicyReports board{drk::training::ServedPolicy{}, /*steps=*/4, /*max_staleness=*/1};
  std::unique_ptr<drk::runtime::http::HttpServer> server;

  Endpoint() {
    drk::runtime::http::Router router;
    board.add_routes(router);
    drk::runtime::http::HttpServerOptions options;
    options.threads = 2;
    auto started = drk::runtime::http::HttpServer::start(options, std::move(router));
    DRK_REQUIRE(started.ok());
    server = std::move(*started);
  }
  ~Endpoint() {
    board.close();
    server.reset();
  }
  uint16_t port() const { return server->port(); }
};

}  // namespace

DRK_TEST_CASE("a bad version report is answered 400 naming the field, and changes nothing") {
  Endpoint endpoint;
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"[1]", "JSON object"},
      {R"({"model": "m"})", "'version' is missing"},
      {R"({"version": -1})", "'version'"},
      {R"({"version": 1.5})", "'version'"},
      {R"({"version": 1, "model": ""})", "'model'"},
      {R"({"version": 1, "endpoint": "ftp://host/v1"})", "'endpoint'"},
      {R"({"version": 1, "weights": "w"})", "unknown field 'weights'"}};
  for (const auto& [body, named] : bad) {
    const auto answer = http_request(endpoint.port(), "POST", "/policy", body);
    DRK_CHECK_MESSAGE(answer.status == 400, body);
    DRK_CHECK_MESSAGE(answer.body.find(named) != std::string::npos, body << " -> " << answer.body);
  }
  DRK_CHECK(endpoint.board.take_new().empty());
}

DRK_TEST_CASE("versions go forward: a newer one is taken once, an older one is refused 409, a retry is 200") {
  Endpoint endpoint;
  const auto port = endpoint.port();
  DRK_CHECK(http_request(port, "POST", "/policy", R"({"version": 2, "model": "v2", "endpoint": "http://h:1/v1"})").status == 200);
  DRK_CHECK(http_request(port, "POST", "/policy", R"({"version": 2, "model": "v2", "endpoint": "http://h:1/v1"})").status == 200);
  DRK_CHECK(http_request(port, "POST", "/policy", R"({"version": 2, "model": "other"})").status == 409);
  const auto back = http_request(port, "POST", "/policy", R"({"version": 1})");
  DRK_CHECK(back.status == 409);
  DRK_CHECK(back.body.find("goes back from version 2") != std::string::npos);
  DRK_CHECK(http_request(port, "POST", "/policy", R"({"version": 5})").status == 200);
  const auto taken = endpoint.board.take_new();
  DRK_REQUIRE(taken.size() == 2);
  DRK_CHECK(taken[0] == drk::training::ServedPolicy{2, "v2", "http://h:1/v1"});
  DRK_CHECK(taken[1].version == 5);
  DRK_CHECK(taken[1].model.empty());
  DRK_CHECK(endpoint.board.take_new().empty());
  const auto state = nlohmann::json::parse(http_request(port, "GET", "/policy").body);
  DRK_CHECK(state["version"] == 5);
  DRK_CHECK(state["steps"] == 4);
  DRK_CHECK(state["max_staleness"] == 1);
}

DRK_TEST_CASE("GET /policy?steps_done=N answers once N steps are done, or when the Learner stops") {
  Endpoint endpoint;
  const auto port = endpoint.port();
  auto waiting = std::async(std::launch::async, [&] { return http_request(port, "GET", "/policy?steps_done=2"); });
  endpoint.board.set_steps_done(2);
  const auto done = waiting.get();
  DRK_REQUIRE(done.status == 200);
  DRK_CHECK(nlohmann::json::parse(done.body)["steps_done"] == 2);

  auto stopped = std::async(std::launch::async, [&] { return http_request(port, "GET", "/policy?steps_done=9"); });
  endpoint.board.close();
  const auto answer = stopped.get();
  DRK_REQUIRE(answer.status == 200);
  DRK_CHECK(nlohmann::json::parse(answer.body)["steps_done"] == 2);

  DRK_CHECK(http_request(port, "GET", "/policy?steps=2").status == 400);
}
