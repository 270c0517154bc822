// `drk run --dashboard` as a person and a scraper meet it: the quickstart on a free loopback port;
// the URL it prints answers the snapshot, server-sent events push it as the run goes (the
// archive's evaluations reach them), promtool accepts /metrics, and headless Chromium draws the
// run's steps (its screenshot kept as BUILD/test-artifacts/dashboard-live.png; without Chromium
// that part says so and is left out). A dashboard beyond
// loopback without a token is refused before the run starts (given by --dashboard or by the
// experiment's `dashboard:`).
#include <nlohmann/json.hpp>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "tests/doctest_drk.h"
#include "tests/support/headless_chromium.h"
#include "tests/support/http_test_client.h"
#include "tests/support/promtool.h"
#include "tests/support/ran_program.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"

namespace {

using drk::testing::http_request;
using drk::testing::RunDir;
using drk::testing::SpawnedProgram;
using Json = nlohmann::json;

// Starting the run's processes (LibTorch loads in each) takes seconds on two loaded cores.
constexpr int kStartTries = 1200;  // 100 ms apart

uint64_t evaluations(const Json& snapshot) {
  uint64_t count = 0;
  for (const auto& [outcome, n] : snapshot["outcomes"].items()) count += n.get<uint64_t>();
  return count;
}

// The page in headless Chromium on the live run: it draws the run's steps as they come.
void check_in_chromium(uint16_t port) {
  using drk::testing::HeadlessChromium;
  if (!HeadlessChromium::installed()) {
    DRK_MESSAGE("the page was not loaded in a browser: " << HeadlessChromium::kPath
                                                         << " is missing (Debian's chromium package)");
    return;
  }
  std::filesystem::create_directories(DRK_ARTIFACT_DIR);
  const std::string artifacts = DRK_ARTIFACT_DIR;
  auto started = HeadlessChromium::start(1400, 1800, artifacts + "/dashboard-live-chromium.log");
  DRK_REQUIRE_MESSAGE(started.ok(), (started.ok() ? "" : started.error().describe()));
  HeadlessChromium& browser = **started;
  auto opened = browser.open("http://127.0.0.1:" + std::to_string(port) + "/");
  DRK_REQUIRE_MESSAGE(opened.ok(), (opened.ok() ? "" : opened.error().describe()));
  // A step of the quickstart takes tens of seconds on two loaded cores.
  auto drawn = browser.wait_until(
      "document.body.dataset.connection == 'live' && Number(document.body.dataset.steps) >= 1 && "
      "Number(document.getElementById('chart-reward').dataset.points) >= 1",
      std::chrono::seconds(300));
  DRK_REQUIRE_MESSAGE(drawn.ok(), (drawn.ok() ? "" : drawn.error().describe()));
  auto actors = browser.evaluate("document.querySelectorAll('#actors tbody tr').length");
  DRK_REQUIRE(actors.ok());
  DRK_CHECK(actors->get<int>() >= 7);
  auto png = browser.screenshot_png();
  DRK_REQUIRE_MESSAGE(png.ok(), (png.ok() ? "" : png.error().describe()));
  const std::string screenshot = artifacts + "/dashboard-live.png";
  std::ofstream(screenshot, std::ios::binary) << *png;
  DRK_MESSAGE("the live run's dashboard: " << screenshot);
}

}  // namespace

DRK_TEST_CASE("drk run --dashboard serves the run's snapshot, pushes it as it changes, and /metrics passes promtool") {
  RunDir dir;
  SpawnedProgram run({DRK_BINARY, "run", std::string(DRK_SOURCE_DIR) + "/configs/quickstart.yaml", "--fresh", "--set",
                      "run_dir=" + dir.file("run"), "--set", "experiment.steps=4", "--dashboard", "127.0.0.1:0"},
                     dir.file("output.txt"));
  const std::regex url_line("dashboard: http://127\\.0\\.0\\.1:([0-9]+)/");
  uint16_t port = 0;
  for (int attempt = 0; attempt < kStartTries && port == 0; ++attempt) {
    DRK_REQUIRE_MESSAGE(run.running(), dir.read("output.txt"));
    std::smatch match;
    const std::string output = dir.read("output.txt");
    if (std::regex_search(output, match, url_line)) {
      port = static_cast<uint16_t>(std::stoi(match[1]));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  DRK_REQUIRE_MESSAGE(port != 0, dir.read("output.txt"));

  const auto page = http_request(port, "GET", "/");
  DRK_CHECK(page.status == 200);
  const auto answer = http_request(port, "GET", "/api/snapshot");
  DRK_REQUIRE(answer.status == 200);
  const Json snapshot = Json::parse(answer.body);
  DRK_CHECK(snapshot["run"]["topology"] == "quickstart");
  DRK_CHECK(snapshot["run"]["run_dir"] == dir.file("run"));
  DRK_CHECK(snapshot["actors"].size() >= 7);  // six roles, two evaluators, the head
  DRK_CHECK(snapshot["tasks"].size() == 8);   // quickstart's experiment.tasks

  // Events arrive without being asked for: the first at once, then each change, until one carries
  // evaluations the Archivist recorded.
  drk::testing::SseTestClient events(port, "/api/events");
  DRK_REQUIRE(events.status_line().find("200") != std::string::npos);
  int received = 0;
  Json pushed;
  while (received < 2 || evaluations(pushed) == 0) {
    const auto event = events.next_event();
    DRK_REQUIRE_MESSAGE(event.has_value(), "the stream ended after " << received << " events\n" << dir.read("output.txt"));
    pushed = Json::parse(*event);
    ++received;
  }
  DRK_CHECK(received >= 2);
  DRK_CHECK(pushed["evaluators"].size() >= 1);

  const auto metrics = http_request(port, "GET", "/metrics");
  DRK_REQUIRE(metrics.status == 200);
  DRK_CHECK(metrics.body.find("drk_evaluations_total{outcome=\"correct\"}") != std::string::npos);
  DRK_CHECK(metrics.body.find("drk_actor_mailbox_depth{actor=\"oracle\"") != std::string::npos);
  if (const auto checked = drk::testing::promtool_check(metrics.body)) {
    DRK_CHECK_MESSAGE(checked->exit_code == 0, checked->output);
  } else {
    DRK_MESSAGE(drk::testing::kPromtoolMissing);
  }

  check_in_chromium(port);

  // Enough seen: Ctrl-C ends the run in order.
  ::kill(run.pid(), SIGINT);
  DRK_REQUIRE(run.wait_for(120'000));
  DRK_CHECK(run.exit_code() == 130);
}

DRK_TEST_CASE("drk run with a dashboard beyond loopback and no token is refused before the run starts") {
  RunDir dir;
  ::unsetenv("DRK_DASHBOARD_TOKEN");
  const auto ran = drk::testing::run_program(
      dir, DRK_BINARY,
      {"run", std::string(DRK_SOURCE_DIR) + "/configs/quickstart.yaml", "--set", "run_dir=" + dir.file("run"),
       "--dashboard", "0.0.0.0:0"});
  DRK_CHECK(ran.exit_code == 1);
  DRK_CHECK(ran.output.find("--dashboard-token-file") != std::string::npos);
  DRK_CHECK_FALSE(std::filesystem::exists(dir.file("run/topology.yaml")));
  // The same address given by the experiment: refused before any child starts.
  const auto configured = drk::testing::run_program(
      dir, DRK_BINARY,
      {"run", std::string(DRK_SOURCE_DIR) + "/configs/quickstart.yaml", "--set", "run_dir=" + dir.file("run"), "--set",
       "experiment.dashboard=0.0.0.0:0"});
  DRK_CHECK(configured.exit_code == 1);
  DRK_CHECK_MESSAGE(configured.output.find("experiment.dashboard: ") != std::string::npos, configured.output);
  DRK_CHECK(configured.output.find("--dashboard-token-file") != std::string::npos);
}
