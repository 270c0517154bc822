// `drk report` as a person sees it: the command writes the page of a recorded run, Debian's
// headless Chromium parses it (the DOM it builds has every chart's points) and takes a
// screenshot, kept as a test artifact: BUILD/test-artifacts/report.png (the path is printed).
// Skipped (exit 77) where the chromium package is not installed.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"
#include "tests/support/device_skip.h"
#include "tests/support/ran_program.h"
#include "tests/support/recorded_run.h"
#include "tests/support/run_dir.h"

namespace fs = std::filesystem;
using drk::archivist::Archive;
using drk::testing::RunDir;

namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

size_t count(const std::string& text, const std::string& what) {
  size_t found = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++found;
  return found;
}

// Four steps over three tasks, a few hacks caught by two checks.
void record_run(const std::string& run_dir) {
  drk::testing::write_topology(run_dir, "trloo");
  auto archive = Archive::open(Archive::default_path(run_dir));
  DRK_REQUIRE(archive);
  const char* tasks[] = {"relu", "softmax", "matmul"};
  for (uint32_t step = 0; step < 4; ++step) {
    for (int t = 0; t < 3; ++t) {
      const std::string id = "s" + std::to_string(step) + "/" + tasks[t];
      drk::testing::record_candidate(*archive, {.id = id, .task = tasks[t], .step = step,
                                                .speedup = 0.8 + 0.25 * step * (t + 1) / 2, .coverage = 1});
    }
    drk::testing::record_step(*archive, step, 0.6 + 0.04 * step, 0.8 + 0.25 * step * 1.5);
  }
  drk::testing::record_candidate(*archive, {.id = "s1/matmul/hack", .task = "matmul", .step = 1, .honest = false,
                                            .speedup = 30, .failed_checks = {"results_cached"},
                                            .summary = "results_cached: the outputs of the previous call"});
  drk::testing::record_candidate(*archive, {.id = "s2/relu/hack", .task = "relu", .step = 2, .honest = false,
                                            .speedup = 12, .failed_checks = {"static.process", "results_cached"},
                                            .summary = "static.process: the source starts a process"});
}

}  // namespace

DRK_TEST_CASE("drk report's page renders in headless Chromium with every chart's points") {
  if (!fs::exists(kChromium)) {
    DRK_MESSAGE("skipped: /usr/bin/chromium is missing: install Debian's chromium package "
                "(apt-get install chromium, or tools/scripts/install-deps.sh --tests)");
    drk::testing::skipped_for_missing_device() = true;
    return;
  }
  RunDir dir;
  const std::string run_dir = dir.file("run");
  fs::create_directories(run_dir);
  record_run(run_dir);
  const std::string page = dir.file("report.html");
  auto reported = drk::testing::run_program(dir, DRK_BINARY, {"report", run_dir, "--out", page});
  DRK_REQUIRE_MESSAGE(reported.exit_code == 0, reported.output);
  DRK_CHECK(reported.output.find("wrote " + page) != std::string::npos);

  const std::string profile = "--user-data-dir=" + dir.file("chromium-profile");
  auto dom = drk::testing::run_program(
      dir, kChromium, {"--headless", "--no-sandbox", "--disable-gpu", profile, "--dump-dom", "file://" + page});
  DRK_REQUIRE_MESSAGE(dom.exit_code == 0, dom.output);
  // Five charts of four steps each, parsed as SVG elements (not text): the charts have data.
  DRK_CHECK_MESSAGE(count(dom.output, "<circle class=\"point\"") == 5 * 4, dom.output);
  DRK_CHECK(dom.output.find("<section id=\"hacks\">") != std::string::npos);

  const char* binary_dir = std::getenv("DRK_BINARY_DIR");
  const fs::path artifacts = fs::path(binary_dir ? binary_dir : dir.path().string()) / "test-artifacts";
  fs::create_directories(artifacts);
  const std::string screenshot = (artifacts / "report.png").string();
  fs::remove(screenshot);
  auto shot = drk::testing::run_program(dir, kChromium,
                                        {"--headless", "--no-sandbox", "--disable-gpu", profile,
                                         "--hide-scrollbars", "--screenshot=" + screenshot,
                                         "--window-size=1400,2400", "file://" + page});
  DRK_REQUIRE_MESSAGE(shot.exit_code == 0, shot.output);
  std::ifstream png(screenshot, std::ios::binary);
  std::string signature(8, '\0');
  png.read(signature.data(), 8);
  DRK_CHECK(signature == "\x89PNG\r\n\x1a\n");
  DRK_CHECK(fs::file_size(screenshot) > 20'000);  // a page with charts, not a blank one
  std::cout << "report screenshot: " << screenshot << "\n";
}

DRK_TEST_CASE("drk report names a run directory that does not exist and the fix") {
  RunDir dir;
  auto reported = drk::testing::run_program(dir, DRK_BINARY, {"report", dir.file("no-such-run")});
  DRK_CHECK(reported.exit_code == 1);
  DRK_CHECK_MESSAGE(reported.output.find("is not a folder: pass a run directory") != std::string::npos,
                    reported.output);
}
