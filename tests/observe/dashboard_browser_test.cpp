// The dashboard's page as a person sees it: a real HTTP server (runtime/http/) serves the page,
// a run's snapshot and its server-sent events, as `drk run --dashboard` does; Debian's headless
// Chromium loads the page, the test pushes snapshots of more and more steps, and the page must
// draw each one as it arrives. The screenshot is kept as a test artifact:
// BUILD/test-artifacts/dashboard.png (the path is printed; docs/dashboard.md copies it).
// Skipped (exit 77) where the chromium package is not installed.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "base/json_text.h"
#include "runtime/http/event_stream.h"
#include "runtime/http/http_server.h"
#include "runtime/http/router.h"
#include "tests/doctest_drk.h"
#include "tests/support/device_skip.h"
#include "tests/support/headless_chromium.h"
#include "tools/observe/dashboard_page.h"

namespace fs = std::filesystem;
namespace http = drk::runtime::http;
using drk::Json;
using drk::testing::HeadlessChromium;

namespace {

constexpr std::chrono::seconds kPageTimeout{60};

// Model output a page must show as text and never run.
const std::string kHostileSource =
    "<script>document.body.dataset.injected = 'script'</script>\n"
    "<img src=x onerror=\"document.body.dataset.injected = 'img'\">\n"
    "float softmax(const float* x, int n);\n";
const std::string kHostileTask = "softmax <b onclick=\"alert(1)\">bold</b>";
const std::string kReluSource =
    "#include \"drk_kernel.h\"\n\n"
    "__global__ void relu_kernel(const float* x, float* y, int64_t n) {\n"
    "  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;\n"
    "  if (i < n) y[i] = x[i] > 0.f ? x[i] : 0.f;\n"
    "}\n";

// A run's snapshot after `steps` steps, with every field of the dashboard's JSON (docs/dashboard.md).
Json snapshot(int steps) {
  Json step_list = Json::array();
  for (int step = 1; step <= steps; ++step) {
    const double progress = step / 10.0;
    step_list.push_back({{"step", step},
                         {"mean_reward", 0.1 + progress * 0.6 + (step % 2) * 0.03},
                         {"best_speedup", 0.8 + progress * 2.5},
                         {"correct_fraction", 0.3 + progress * 0.5},
                         {"seconds", 14.0 + step % 3},
                         {"fast_p", {{"0", 0.3 + progress * 0.5}, {"1.0", 0.1 + progress * 0.4},
                                     {"1.2", progress * 0.35}, {"1.5", progress * 0.2}, {"2.0", progress * 0.1}}}});
  }
  return {
      {"run", {{"topology", "quickstart"}, {"run_dir", "runs/quickstart-20261202"}, {"now_unix_ms", 1796000000000},
               {"finished", false}, {"training", "trloo"}}},
      {"steps", step_list},
      {"outcomes", {{"correct", 40 * steps}, {"hacked", 3 * steps}, {"failed", 9 * steps}, {"screened", 5 * steps}}},
      {"verifier_reasons",
       {{{"check", "results_cached"}, {"count", 2 * steps}}, {{"check", "static.process"}, {"count", steps}}}},
      {"tasks",
       {{{"task", "relu"}, {"best_speedup", 1.9}, {"candidate_id", "s4/relu/2"}, {"language", "cuda"},
         {"verdict", "correct"}, {"failed_checks", Json::array()}, {"source", kReluSource}},
        {{"task", kHostileTask}, {"best_speedup", 0.7}, {"candidate_id", "s2/softmax/1"}, {"language", "cpp"},
         {"verdict", "hacked"}, {"failed_checks", {"results_cached"}}, {"source", kHostileSource}}}},
      {"evaluators",
       {{{"name", "evaluator.0"}, {"evaluations", 57 * steps}, {"utilisation", 0.81}, {"gpu_busy_fraction", 0.64}}}},
      {"compile_cache", {{"hits", 30 * steps}, {"misses", 12}}},
      {"actors",
       {{{"name", "oracle"}, {"role", "oracle"}, {"process", "head"}, {"state", "running"}, {"mailbox_depth", 4},
         {"mailbox_capacity", 1024}, {"messages_per_second", 51.5}, {"dead_letters", 0}},
        {{"name", "evaluator.0"}, {"role", "evaluator"}, {"process", "evaluators"}, {"state", "busy"},
         {"mailbox_depth", 900}, {"mailbox_capacity", 1024}, {"messages_per_second", 3.5}, {"dead_letters", 2}}}},
      {"processes",
       {{{"name", "evaluators"}, {"pid", 4242}, {"status", "running"}, {"restarts", 1},
         {"last_cause", "killed by SIGSEGV"}},
        {{"name", "learners"}, {"pid", 4243}, {"status", "running"}, {"restarts", 0}, {"last_cause", ""}}}},
      {"nodes",
       {{{"name", "head"}, {"state", "alive"}, {"last_heartbeat_age_seconds", 0.4}},
        {{"name", "gpu-box"}, {"state", "lost"}, {"last_heartbeat_age_seconds", 31.0}}}},
  };
}

// What `drk run --dashboard` serves, with the snapshot the test sets: the page, the snapshot,
// and its server-sent events (the current snapshot on connecting, then each one published).
class DashboardFixture {
 public:
  DashboardFixture() {
    http::Router router;
    router.add("GET", "/", [](const http::HttpRequest&, const http::PathParameters&) {
      http::HttpResponse response;
      response.content_type = "text/html; charset=utf-8";
      response.body = std::string(drk::observe::dashboard_page_html());
      return response;
    });
    router.add("GET", "/api/snapshot", [this](const http::HttpRequest&, const http::PathParameters&) {
      std::lock_guard lock(mutex_);
      return http::HttpResponse::json(200, current_);
    });
    router.add("GET", "/api/events", [this](const http::HttpRequest&, const http::PathParameters&) {
      auto stream = std::make_shared<http::EventStream>();
      std::lock_guard lock(mutex_);
      stream->publish("snapshot", current_);
      streams_.push_back(stream);
      http::HttpResponse response;
      response.events = std::move(stream);
      return response;
    });
    auto server = http::HttpServer::start({}, std::move(router));
    DRK_REQUIRE_MESSAGE(server.ok(), (server.ok() ? "" : server.error().describe()));
    server_ = std::move(*server);
  }

  ~DashboardFixture() { end_streams(); }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()) + "/"; }

  // Ends every event stream, as a head that restarts its service would.
  void end_streams() {
    std::lock_guard lock(mutex_);
    for (auto& weak : streams_)
      if (auto stream = weak.lock()) stream->close();
  }

  size_t streams_opened() {
    std::lock_guard lock(mutex_);
    return streams_.size();
  }

  void publish(const Json& snapshot) {
    std::lock_guard lock(mutex_);
    current_ = drk::json_text(snapshot);
    for (auto& weak : streams_)
      if (auto stream = weak.lock()) stream->publish("snapshot", current_);
  }

 private:
  std::mutex mutex_;
  std::string current_ = drk::json_text(snapshot(3));
  std::vector<std::weak_ptr<http::EventStream>> streams_;
  std::unique_ptr<http::HttpServer> server_;  // last: its handlers stop before what they use goes
};

// The page's value of `expression`, which must evaluate.
Json page_value(HeadlessChromium& browser, const std::string& expression) {
  auto value = browser.evaluate(expression);
  DRK_REQUIRE_MESSAGE(value.ok(), (value.ok() ? "" : value.error().describe()));
  return *value;
}

void reach(HeadlessChromium& browser, const std::string& condition) {
  auto reached = browser.wait_until(condition, kPageTimeout);
  DRK_REQUIRE_MESSAGE(reached.ok(), (reached.ok() ? "" : reached.error().describe()));
}

int chart_points(HeadlessChromium& browser, const std::string& chart) {
  return std::stoi(page_value(browser, "document.getElementById('" + chart + "').dataset.points").get<std::string>());
}

std::string artifact_path(const std::string& name) {
  fs::create_directories(DRK_ARTIFACT_DIR);
  return std::string(DRK_ARTIFACT_DIR) + "/" + name;
}

}  // namespace

DRK_TEST_CASE("headless Chromium draws the run's snapshot, then each snapshot the head pushes, as text") {
  if (!HeadlessChromium::installed()) {
    DRK_MESSAGE("skipped: " << HeadlessChromium::kPath << " is missing: install Debian's chromium package "
                            << "(apt-get install chromium, or tools/scripts/install-deps.sh --tests)");
    drk::testing::skipped_for_missing_device() = true;
    return;
  }
  DashboardFixture dashboard;
  auto started = HeadlessChromium::start(1400, 1800, artifact_path("dashboard-chromium.log"));
  DRK_REQUIRE_MESSAGE(started.ok(), (started.ok() ? "" : started.error().describe()));
  HeadlessChromium& browser = **started;
  auto opened = browser.open(dashboard.url());
  DRK_REQUIRE_MESSAGE(opened.ok(), (opened.ok() ? "" : opened.error().describe()));

  // The stream's first event is the snapshot of connecting; then each pushed one is drawn.
  reach(browser, "document.body.dataset.updates >= 1 && document.body.dataset.steps == 3");
  DRK_CHECK(page_value(browser, "document.body.dataset.connection") == "live");
  dashboard.publish(snapshot(4));
  reach(browser, "document.body.dataset.updates >= 2 && document.body.dataset.steps == 4");
  dashboard.publish(snapshot(5));
  reach(browser, "document.body.dataset.updates >= 3 && document.body.dataset.steps == 5");

  DRK_CHECK(chart_points(browser, "chart-reward") == 5);
  DRK_CHECK(chart_points(browser, "chart-speedup") == 5);
  DRK_CHECK(chart_points(browser, "chart-correct") == 5);
  DRK_CHECK(chart_points(browser, "chart-seconds") == 5);
  DRK_CHECK(chart_points(browser, "chart-fastp") == 25);  // five thresholds
  DRK_CHECK(page_value(browser, "document.getElementById('chart-fastp').dataset.series") == "5");
  DRK_CHECK(page_value(browser, "document.querySelectorAll('#chart-reward polyline').length") == 1);
  DRK_CHECK(page_value(browser, "document.querySelectorAll('#tasks details.task').length") == 2);
  DRK_CHECK(page_value(browser, "document.querySelectorAll('#actors tbody tr').length") == 2);
  DRK_CHECK(page_value(browser, "document.querySelectorAll('#processes tbody tr').length") == 2);
  DRK_CHECK(page_value(browser, "document.querySelectorAll('#nodes .badge.stale').length") == 1);
  // The Evaluators' evaluations, summed.
  DRK_CHECK(page_value(browser, "document.getElementById('summary').textContent.includes('285')") == true);

  // The model's source and the task's name are shown as they are, and nothing in them ran.
  DRK_CHECK(page_value(browser, "document.querySelectorAll('#tasks pre.source')[1].textContent") == kHostileSource);
  DRK_CHECK(page_value(browser, "document.querySelectorAll('#tasks .task-name')[1].textContent") == kHostileTask);
  DRK_CHECK(page_value(browser, "document.querySelectorAll('#tasks img, #tasks b, main script').length") == 0);
  DRK_CHECK(page_value(browser, "document.body.dataset.injected === undefined") == true);

  // The first task's source open, as a reader would look at it; a source stays open across updates.
  page_value(browser, "document.querySelector('#tasks details.task').open = true");
  dashboard.publish(snapshot(6));
  reach(browser, "document.body.dataset.updates >= 4 && document.body.dataset.steps == 6");
  DRK_CHECK(page_value(browser, "document.querySelector('#tasks details.task').open") == true);
  auto png = browser.screenshot_png();
  DRK_REQUIRE_MESSAGE(png.ok(), (png.ok() ? "" : png.error().describe()));
  DRK_CHECK(png->rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  const std::string screenshot = artifact_path("dashboard.png");
  std::ofstream(screenshot, std::ios::binary) << *png;
  DRK_MESSAGE("the dashboard's screenshot: " << screenshot);

  // A stream that ends is opened again by the browser, which then gets the current snapshot.
  dashboard.end_streams();
  reach(browser, "document.body.dataset.updates >= 5 && document.body.dataset.connection == 'live'");
  DRK_CHECK(dashboard.streams_opened() == 2);
  DRK_CHECK(page_value(browser, "document.body.dataset.steps") == "6");

  // A sparse snapshot (a run just started) and one of the wrong types are drawn as "none yet".
  dashboard.publish({{"run", {{"topology", "quickstart"}}}, {"steps", Json::array()}});
  reach(browser, "document.body.dataset.updates >= 6 && document.body.dataset.steps == 0");
  DRK_CHECK(chart_points(browser, "chart-reward") == 0);
  DRK_CHECK(chart_points(browser, "chart-fastp") == 0);
  dashboard.publish({{"steps", {{{"step", "one"}, {"fast_p", nullptr}}}}, {"tasks", {nullptr, 5}}, {"actors", "none"},
                     {"outcomes", {{"correct", "many"}}}, {"nodes", {{{"name", {{"nested", true}}}}}}});
  reach(browser, "document.body.dataset.updates >= 7");
  DRK_CHECK(chart_points(browser, "chart-reward") == 0);
  DRK_CHECK(page_value(browser, "document.getElementById('problem').hidden") == true);
}
