// The whole training loop with real processes and sockets: `drk run` on a small topology, then
// `drk generate` with the policy it trained, and the same run with every actor process
// SIGKILLed in turn while it works.
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"
#include "tests/support/process_table.h"
#include "tests/support/run_dir.h"
#include "tests/support/spawned_program.h"

namespace {

using drk::testing::RunDir;
using drk::testing::SpawnedProgram;

constexpr int kRunTimeoutMs = 240'000;

std::vector<std::string> drk_run(const RunDir& dir, int steps, const std::vector<std::string>& more = {}) {
  std::vector<std::string> argv{DRK_BINARY, "run", std::string(DRK_SOURCE_DIR) + "/tests/integration/loop.yaml",
                                "--fresh", "--set", "run_dir=" + dir.file("run"), "--set",
                                "experiment.steps=" + std::to_string(steps)};
  argv.insert(argv.end(), more.begin(), more.end());
  return argv;
}

// The pid of the `drk host` process that hosts `process` of the run in `run_dir`, or -1.
pid_t host_pid(const std::string& run_dir, const std::string& process) {
  const auto found = drk::testing::processes_where([&](const std::vector<std::string>& argv) {
    return drk::testing::has_option(argv, "--process", process) && drk::testing::has_option(argv, "--run-dir", run_dir);
  });
  return found.empty() ? -1 : found.back();
}

size_t archived_candidates(const std::string& run_dir) {
  auto archive = drk::archivist::Archive::open(drk::archivist::Archive::default_path(run_dir), true);
  if (!archive) return 0;
  auto tallies = archive->tallies();
  size_t count = 0;
  if (tallies) for (const auto& tally : *tallies) count += tally.candidates;
  return count;
}

size_t occurrences(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

// Checks what a finished run must leave: the summary, and a verified kernel for every task.
void check_finished_run(const RunDir& dir, const std::string& output, int steps) {
  DRK_CHECK(output.find("== summary ==") != std::string::npos);
  DRK_CHECK(output.find("step " + std::to_string(steps) + "/" + std::to_string(steps)) !=
            std::string::npos);
  auto archive = drk::archivist::Archive::open(drk::archivist::Archive::default_path(dir.file("run")), true);
  DRK_REQUIRE(archive.ok());
  auto best = archive->best_per_task();
  DRK_REQUIRE(best.ok());
  DRK_REQUIRE(best->size() == 2);
  DRK_CHECK((*best)[0].task == "gemm_multiply_leakyrelu");
  DRK_CHECK((*best)[1].task == "relu");
  for (const auto& row : *best) DRK_CHECK(row.speedup > 0.0);
  auto recorded = archive->steps();
  DRK_REQUIRE(recorded.ok());
  std::string steps_seen;
  for (const auto& row : *recorded) steps_seen += " " + std::to_string(row.step);
  DRK_CHECK_MESSAGE(recorded->size() == static_cast<size_t>(steps),
                    "steps in the archive:" << steps_seen << "\n" << output);
}

}  // namespace

DRK_TEST_CASE("drk run trains through all six actors, re-measures the best kernels and ends with a summary; drk generate refines with the policy") {
  RunDir dir;
  SpawnedProgram run(drk_run(dir, 2, {"--set", "experiment.remeasure=2"}), dir.file("output.txt"));
  const bool ended = run.wait_for(kRunTimeoutMs);
  const std::string output = dir.read("output.txt");
  DRK_REQUIRE_MESSAGE(ended, "the run did not end in time:\n" << output);
  DRK_CHECK_MESSAGE(run.exit_code() == 0, output);
  check_finished_run(dir, output, 2);
  DRK_CHECK(output.find("re-measuring the best kernel of each task 2 times") != std::string::npos);
  auto archive = drk::archivist::Archive::open(drk::archivist::Archive::default_path(dir.file("run")), true);
  DRK_REQUIRE(archive.ok());
  auto best = archive->best_per_task();
  auto remeasured = archive->remeasured();
  DRK_REQUIRE(best.ok());
  DRK_REQUIRE(remeasured.ok());
  DRK_REQUIRE(remeasured->size() == best->size());
  for (size_t i = 0; i < best->size(); ++i) {
    DRK_CHECK((*remeasured)[i].candidate_id == (*best)[i].candidate_id);
    DRK_CHECK((*remeasured)[i].evaluations == 2);
    DRK_CHECK((*remeasured)[i].speedup > 0.0);
    DRK_CHECK((*remeasured)[i].speedup_low <= (*remeasured)[i].speedup_high);
  }
  // Test-time scaling with the policy just trained: drk generate refines relu kernels over two
  // iterations and writes the best verified one.
  SpawnedProgram generate({DRK_BINARY, "generate", dir.file("run"), "--task", "relu", "--iterations", "2", "--window",
                           "1", "--samples", "2", "--trials", "2", "--budget-ms", "20", "--cache-dir",
                           dir.file("run") + "/compile-cache", "--out", dir.file("best.cpp")},
                          dir.file("generate.txt"));
  DRK_REQUIRE_MESSAGE(generate.wait_for(kRunTimeoutMs), dir.read("generate.txt"));
  const std::string generated = dir.read("generate.txt");
  DRK_CHECK_MESSAGE(generate.exit_code() == 0, generated);
  DRK_CHECK_MESSAGE(generated.find("best verified: #") != std::string::npos, generated);
  DRK_CHECK(dir.read("best.cpp").find("drk_kernel") != std::string::npos);
  // A directory without a trained policy: a clear error, nothing generated.
  SpawnedProgram untrained({DRK_BINARY, "generate", dir.file("nothing-here"), "--task", "relu"},
                           dir.file("untrained.txt"));
  DRK_REQUIRE(untrained.wait_for(kRunTimeoutMs));
  DRK_CHECK(untrained.exit_code() == 1);
  DRK_CHECK_MESSAGE(dir.read("untrained.txt").find("holds no policy checkpoint") != std::string::npos,
                    dir.read("untrained.txt"));
}

DRK_TEST_CASE("every actor process SIGKILLed during a run is restarted and the run completes") {
  RunDir dir;
  const std::string run_dir = dir.file("run");
  SpawnedProgram run(drk_run(dir, 3), dir.file("output.txt"));
  // Start killing once work is flowing through the whole loop.
  for (int waited = 0; archived_candidates(run_dir) == 0 && waited < kRunTimeoutMs; waited += 100) {
    DRK_REQUIRE_MESSAGE(run.running(), dir.read("output.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::vector<std::string> victims = {"evaluator.0", "oracle", "verifier", "generator.0",
                                            "archivist", "learner", "evaluator.1"};
  for (const auto& victim : victims) {
    pid_t pid = -1;
    for (int tries = 0; pid < 0 && tries < 100; ++tries) {
      pid = host_pid(run_dir, victim);
      if (pid < 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    DRK_REQUIRE_MESSAGE(pid > 0, "no process for " << victim << "\n" << dir.read("output.txt"));
    DRK_REQUIRE_MESSAGE(run.running(), "the run ended before " << victim << " was killed:\n" << dir.read("output.txt"));
    ::kill(pid, SIGKILL);
    // The next kill waits for the supervisor to report this death: fixed pauses let a fast run
    // reach its orderly shutdown (where deaths are not reported) before the last kill landed.
    const std::string reported = "process '" + victim + "' (pid " + std::to_string(pid) + ") died";
    for (int waited = 0; dir.read("output.txt").find(reported) == std::string::npos; waited += 20) {
      const bool ended = !run.running();
      const std::string output = dir.read("output.txt");
      const bool still_waiting = (waited < kRunTimeoutMs && !ended) || output.find(reported) != std::string::npos;
      DRK_REQUIRE_MESSAGE(still_waiting,
                          "the supervisor did not report " << victim << "'s death:\n" << output);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  const bool ended = run.wait_for(kRunTimeoutMs);
  const std::string output = dir.read("output.txt");
  DRK_REQUIRE_MESSAGE(ended, "the run did not end in time:\n" << output);
  DRK_CHECK_MESSAGE(run.exit_code() == 0, output);
  for (const auto& victim : victims) {
    DRK_CHECK_MESSAGE(output.find("process '" + victim + "'") != std::string::npos, victim);
  }
  DRK_CHECK(occurrences(output, "died: killed by SIGKILL") == victims.size());
  check_finished_run(dir, output, 3);
}
