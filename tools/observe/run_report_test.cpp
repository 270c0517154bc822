#include "tools/observe/run_report.h"

#include <string>

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"
#include "tests/support/recorded_run.h"
#include "tests/support/run_dir.h"
#include "tools/observe/run_history.h"

using drk::archivist::Archive;
using drk::testing::record_candidate;
using drk::testing::record_step;
using drk::testing::RunDir;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t found = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++found;
  return found;
}

// A run of `steps` steps with the given estimator; its matmul candidate of step 0 is a hack that
// fails results_cached, its source a script that must not reach the page unescaped.
drk::observe::RunHistory recorded_run(const RunDir& dir, const std::string& estimator, uint32_t steps) {
  drk::testing::write_topology(dir.path().string(), estimator);
  {
    auto archive = Archive::open(Archive::default_path(dir.path().string()));
    DRK_REQUIRE(archive);
    for (uint32_t step = 0; step < steps; ++step) {
      record_candidate(*archive, {.id = "s" + std::to_string(step) + "/relu", .task = "relu", .step = step,
                                  .speedup = 1.0 + 0.1 * step});
      record_step(*archive, step, 0.6 + 0.05 * step, 1.0 + 0.1 * step);
    }
    record_candidate(*archive, {.id = "s0/matmul<hack>", .task = "matmul", .step = 0, .honest = false,
                                .speedup = 20, .failed_checks = {"results_cached"},
                                .source = "</code></pre><script>alert('x')</script>",
                                .summary = "results_cached: the answer of the previous call"});
  }
  auto history = drk::observe::read_run_history(dir.path().string());
  DRK_REQUIRE_MESSAGE(history, history.error().message);
  return *history;
}

}  // namespace

DRK_TEST_CASE("the report has every section, lists the hacks by check and escapes what the run holds") {
  RunDir dir;
  const std::string html = drk::observe::render_run_report({recorded_run(dir, "trloo", 3)});
  DRK_CHECK(html.starts_with("<!DOCTYPE html>"));
  for (const char* section : {"id=\"summary\"", "id=\"curves\"", "id=\"best-kernels\"", "id=\"hacks\"",
                              "id=\"configuration\""})
    DRK_CHECK_MESSAGE(html.find(section) != std::string::npos, section);
  DRK_CHECK(count(html, "<svg") == 5);  // reward, best speedup, coverage, Fast@1.0, Fast@1.2
  DRK_CHECK(count(html, "<circle class=\"point\"") == 5 * 3);
  // The hack, by its check, with its example escaped.
  DRK_CHECK(html.find("<code class=\"hacked\">results_cached</code>") != std::string::npos);
  DRK_CHECK(html.find("s0/matmul&lt;hack&gt;") != std::string::npos);
  DRK_CHECK(html.find("<script>") == std::string::npos);
  DRK_CHECK(html.find("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;") != std::string::npos);
  // The best kernel and the configuration.
  DRK_CHECK(html.find("1.20x") != std::string::npos);
  DRK_CHECK(html.find("estimator: trloo") != std::string::npos);
  DRK_CHECK(html.find("class=\"missing\"") == std::string::npos);
}

DRK_TEST_CASE("the run table gives the hard-coded-shape rate where candidates were tried at other shapes") {
  RunDir plain_dir;
  const std::string plain = drk::observe::render_run_report({recorded_run(plain_dir, "trloo", 1)});
  DRK_CHECK(plain.find("<th>hard-coded shapes</th>") != std::string::npos);
  RunDir dir;
  drk::testing::write_topology(dir.path().string(), "trloo");
  {
    auto archive = Archive::open(Archive::default_path(dir.path().string()));
    DRK_REQUIRE(archive);
    record_candidate(*archive, {.id = "s0/relu", .task = "relu", .step = 0, .speedup = 1.0});
    record_candidate(*archive, {.id = "s0/relu-fixed", .task = "relu", .step = 0, .honest = false,
                                .failed_checks = {"hardcoded_shape"}});
    record_step(*archive, 0, 0.5, 1.0);
  }
  auto history = drk::observe::read_run_history(dir.path().string());
  DRK_REQUIRE_MESSAGE(history, history.error().message);
  DRK_CHECK(history->other_shapes.tried == 1);
  DRK_CHECK(history->other_shapes.hardcoded == 1);
  DRK_CHECK(drk::observe::render_run_report({*history}).find("100.0 % of 1") != std::string::npos);
}

DRK_TEST_CASE("two runs give two series in every chart, named by their estimator") {
  RunDir trloo_dir, grpo_dir;
  const std::string html = drk::observe::render_run_report(
      {recorded_run(trloo_dir, "trloo", 3), recorded_run(grpo_dir, "grpo", 2)});
  const std::string trloo = "data-series=\"" + trloo_dir.path().filename().string() + " (trloo)\"";
  const std::string grpo = "data-series=\"" + grpo_dir.path().filename().string() + " (grpo)\"";
  DRK_CHECK(count(html, trloo) == 5);
  DRK_CHECK(count(html, grpo) == 5);
  DRK_CHECK(count(html, "<circle class=\"point\"") == 5 * (3 + 2));
}

DRK_TEST_CASE("a run without an archive still gives a page that says what is missing") {
  RunDir dir;
  auto history = drk::observe::read_run_history(dir.path().string());
  DRK_REQUIRE(history);
  const std::string html = drk::observe::render_run_report({*history});
  DRK_CHECK(count(html, "class=\"missing\"") == 2);
  DRK_CHECK(html.find("archive.sqlite does not exist") != std::string::npos);
  DRK_CHECK(count(html, "no step recorded yet") == 5);
  DRK_CHECK(html.find("id=\"configuration\"") != std::string::npos);
}
