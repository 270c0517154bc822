#include "tools/observe/run_history.h"

#include <string>

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"
#include "tests/support/recorded_run.h"
#include "tests/support/run_dir.h"

using drk::archivist::Archive;
using drk::testing::record_candidate;
using drk::testing::record_step;
using drk::testing::RecordedCandidate;
using drk::testing::RunDir;

namespace {

// Two steps over relu and matmul: relu verified at 1.1x then 1.5x, matmul hacked twice (two
// checks, one shared) and verified at 0.9x, softmax only failing.
void record_two_steps(const std::string& run_dir) {
  auto archive = Archive::open(Archive::default_path(run_dir));
  DRK_REQUIRE(archive);
  record_candidate(*archive, {.id = "s0/relu/a", .task = "relu", .step = 0, .speedup = 1.1, .coverage = 0.5});
  record_candidate(*archive, {.id = "s0/matmul/a", .task = "matmul", .step = 0, .honest = false, .speedup = 9,
                              .failed_checks = {"results_cached", "timer_mismatch"}, .summary = "cached <answer>"});
  record_candidate(*archive, {.id = "s0/softmax/a", .task = "softmax", .step = 0, .correct = false, .speedup = 0});
  record_step(*archive, 0, 0.6, 1.1);
  record_candidate(*archive, {.id = "s1/relu/a", .task = "relu", .step = 1, .speedup = 1.5, .coverage = 1.0});
  record_candidate(*archive, {.id = "s1/matmul/a", .task = "matmul", .step = 1, .speedup = 0.9});
  record_candidate(*archive, {.id = "s1/matmul/b", .task = "matmul", .step = 1, .honest = false, .speedup = 4,
                              .failed_checks = {"results_cached"}});
  record_step(*archive, 1, 0.8, 1.5);
}

}  // namespace

DRK_TEST_CASE("a run's history has its steps with coverage and Fast@p, its best kernels and its caught hacks") {
  RunDir dir;
  drk::testing::write_topology(dir.path().string(), "grpo");
  record_two_steps(dir.path().string());
  auto history = drk::observe::read_run_history(dir.path().string());
  DRK_REQUIRE_MESSAGE(history, history.error().message);
  DRK_CHECK(history->estimator == "grpo");
  DRK_CHECK(history->label == dir.path().filename().string() + " (grpo)");
  DRK_CHECK(history->missing.empty());
  DRK_CHECK(history->candidates == 6);
  DRK_CHECK(history->hacked == 2);

  DRK_REQUIRE(history->steps.size() == 2);
  const auto& first = history->steps[0];
  const auto& second = history->steps[1];
  DRK_CHECK(first.step == 1);
  DRK_CHECK(first.mean_reward == doctest::Approx(0.6));
  DRK_CHECK(first.coverage.value_or(-1) == doctest::Approx(0.5));  // relu only: the hack is not verified
  DRK_CHECK(second.coverage.value_or(-1) == doctest::Approx(1.0));  // relu 1.0 and matmul 1.0
  // Three tasks; Fast@1.0: relu (1.1) in step 1, still relu (1.5; matmul's best 0.9) in step 2.
  DRK_CHECK(first.fast_p[0] == doctest::Approx(1.0 / 3));
  DRK_CHECK(first.fast_p[1] == doctest::Approx(0.0));  // 1.1 is not above 1.2
  DRK_CHECK(second.fast_p[1] == doctest::Approx(1.0 / 3));

  DRK_REQUIRE(history->tasks.size() == 3);
  const auto& matmul = history->tasks[0];
  const auto& relu = history->tasks[1];
  const auto& softmax = history->tasks[2];
  DRK_CHECK(matmul.task == "matmul");
  DRK_CHECK(matmul.candidate_id == "s1/matmul/a");  // the hacks are faster, and not counted
  DRK_CHECK(matmul.hacked == 2);
  DRK_CHECK(matmul.candidates == 3);
  DRK_CHECK(relu.speedup == doctest::Approx(1.5));
  DRK_CHECK(relu.step == 2);
  DRK_CHECK(relu.trials_passed == 5);
  DRK_CHECK(relu.source.find("drk_kernel") != std::string::npos);
  DRK_CHECK(softmax.candidate_id.empty());

  DRK_REQUIRE(history->caught.size() == 2);
  DRK_CHECK(history->caught[0].check == "results_cached");
  DRK_CHECK(history->caught[0].candidates == 2);
  DRK_CHECK(history->caught[0].example_id == "s0/matmul/a");
  DRK_CHECK(history->caught[0].example_feedback == "cached <answer>");
  DRK_CHECK(history->caught[1].check == "timer_mismatch");
  DRK_CHECK(history->caught[1].candidates == 1);
}

DRK_TEST_CASE("a run directory without an archive or without steps gives what exists and names what is missing") {
  RunDir dir;
  auto bare = drk::observe::read_run_history(dir.path().string());
  DRK_REQUIRE(bare);
  DRK_CHECK(bare->estimator == "trloo");
  DRK_REQUIRE(bare->missing.size() == 2);
  DRK_CHECK(bare->missing[0].find("topology.yaml is missing") != std::string::npos);
  DRK_CHECK(bare->missing[1].find("archive.sqlite does not exist") != std::string::npos);

  {
    auto archive = Archive::open(Archive::default_path(dir.path().string()));
    DRK_REQUIRE(archive);
    record_candidate(*archive, {.id = "s0/relu/a", .task = "relu"});
  }
  drk::testing::write_topology(dir.path().string(), "trloo");
  auto started = drk::observe::read_run_history(dir.path().string());
  DRK_REQUIRE(started);
  DRK_CHECK(started->steps.empty());
  DRK_CHECK(started->tasks.size() == 1);
  DRK_REQUIRE(started->missing.size() == 1);
  DRK_CHECK(started->missing[0].find("holds no step yet") != std::string::npos);
}

DRK_TEST_CASE("a path that is not a folder is an error that names it") {
  auto history = drk::observe::read_run_history("/nonexistent/run-dir");
  DRK_REQUIRE_FALSE(history);
  DRK_CHECK(history.error().message.find("'/nonexistent/run-dir' is not a folder") != std::string::npos);
}
