// The dashboard's HTTP service on loopback, as a browser and a scraper meet it: the page, the
// snapshot, /metrics, and server-sent events that push the snapshot at once and again when the
// archive grows; a bearer token when it has one; and the [ADDR:]PORT forms of --dashboard.
#include "tools/observe/dashboard_service.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"
#include "tests/support/http_test_client.h"
#include "tests/support/run_dir.h"
#include "tests/support/scored_records.h"

namespace {

using drk::observe::DashboardService;
using drk::testing::http_request;
using drk::testing::RunDir;

drk::runtime::SystemView live_view() {
  drk::runtime::SystemView system;
  system.topology = "quickstart";
  return system;
}

}  // namespace

DRK_TEST_CASE("the dashboard serves its page, the snapshot, /metrics, and pushes a changed snapshot") {
  RunDir dir;
  const std::string run_dir = dir.file("run");
  auto service = DashboardService::start({}, run_dir, live_view);
  DRK_REQUIRE_MESSAGE(service.ok(), service.error().message);
  const uint16_t port = (*service)->port();

  const auto page = http_request(port, "GET", "/");
  DRK_CHECK(page.status == 200);
  DRK_CHECK(page.header("Content-Type").find("text/html") == 0);
  const auto snapshot = http_request(port, "GET", "/api/snapshot");
  DRK_REQUIRE(snapshot.status == 200);
  DRK_CHECK(nlohmann::json::parse(snapshot.body)["run"]["topology"] == "quickstart");
  const auto metrics = http_request(port, "GET", "/metrics");
  DRK_CHECK(metrics.status == 200);
  DRK_CHECK(metrics.header("Content-Type").find("text/plain; version=0.0.4") == 0);
  DRK_CHECK(metrics.body.find("drk_evaluations_total{outcome=\"correct\"} 0") != std::string::npos);

  drk::testing::SseTestClient events(port, "/api/events");
  DRK_REQUIRE(events.status_line().find("200") != std::string::npos);
  const auto first = events.next_event();
  DRK_REQUIRE(first.has_value());
  DRK_CHECK(nlohmann::json::parse(*first)["outcomes"]["correct"] == 0);
  // The run's Archivist starts and records a candidate: the next event has it.
  std::filesystem::create_directories(run_dir);
  auto archive = drk::archivist::Archive::open(drk::archivist::Archive::default_path(run_dir));
  DRK_REQUIRE(archive.ok());
  drk::testing::record_scored(*archive, {.id = "s0/relu/0/t1", .task = "relu"});
  const auto second = events.next_event();
  DRK_REQUIRE(second.has_value());
  DRK_CHECK(nlohmann::json::parse(*second)["outcomes"]["correct"] == 1);
}

DRK_TEST_CASE("a dashboard with a token answers 401 without it") {
  RunDir dir;
  drk::observe::DashboardOptions options;
  options.bearer_token = "s3cret";
  auto service = DashboardService::start(options, dir.file("run"), live_view);
  DRK_REQUIRE(service.ok());
  DRK_CHECK(http_request((*service)->port(), "GET", "/api/snapshot").status == 401);
  DRK_CHECK(http_request((*service)->port(), "GET", "/metrics", "", "s3cret").status == 200);
}

DRK_TEST_CASE("--dashboard takes [ADDR:]PORT; beyond loopback it needs a token") {
  using drk::observe::parse_dashboard_address;
  DRK_CHECK(parse_dashboard_address("8080")->address == "127.0.0.1");
  DRK_CHECK(parse_dashboard_address("8080")->port == 8080);
  DRK_CHECK(parse_dashboard_address(":0")->address == "127.0.0.1");
  DRK_CHECK(parse_dashboard_address("0.0.0.0:9000")->address == "0.0.0.0");
  DRK_CHECK(parse_dashboard_address("[::1]:9000")->address == "::1");
  DRK_CHECK_FALSE(parse_dashboard_address("::1:9000").ok());
  DRK_CHECK_FALSE(parse_dashboard_address("localhost:").ok());
  DRK_CHECK_FALSE(parse_dashboard_address("70000").ok());
  DRK_CHECK_FALSE(parse_dashboard_address("host:port").ok());
  DRK_CHECK(drk::observe::dashboard_url("::1", 80) == "http://[::1]:80/");
  ::unsetenv(drk::observe::kDashboardTokenVariable);
  const auto open = drk::observe::dashboard_options("0.0.0.0:0", "");
  DRK_REQUIRE_FALSE(open.ok());
  DRK_CHECK(open.error().message.find("--dashboard-token-file") != std::string::npos);
  RunDir dir;
  const auto guarded = drk::observe::dashboard_options("0.0.0.0:0", dir.write("token", "abc\n"));
  DRK_REQUIRE(guarded.ok());
  DRK_CHECK(guarded->bearer_token == std::optional<std::string>("abc"));
  DRK_CHECK(drk::observe::dashboard_options("127.0.0.1:0", "")->bearer_token == std::nullopt);
}
