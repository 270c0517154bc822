// No candidate outlives its evaluation: each runs in a sandbox of its own, and an honest candidate
// evaluated after a hostile one (a patched clock, threads left working or spinning, a fork bomb, a
// memory bomb, changed floating-point modes) on the same engine is judged as it is alone: the same
// verdict, a plausible clock, and no process of the hostile one left (its timing beside hostile
// ones is measured by `drk bench containment`).
#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include <string>
#include <vector>

#include <capnp/message.h>

#include "actors/evaluator/evaluation.h"
#include "actors/verifier/verify.h"
#include "tests/doctest_drk.h"
#include "tests/support/test_engine.h"

using namespace drk::evaluator;

namespace {

EngineOptions quick_options() {
  EngineOptions options;
  options.trials = 2;
  options.timing_budget_ms = 150;
  options.min_samples = 5;
  options.max_threads = 1;
  options.target_batch_ms = 5;  // long batches: the loaded CI machine's wake-ups stay small beside them
  options.sandbox.memory_bytes = uint64_t{1} << 30;
  return options;
}

// tests/hacks/FILE: the hostile candidates of the corpus.
std::string hack_source(const std::string& file) { return drk::testing::candidate_source("../hacks/" + file); }

struct Judged {
  bool honest = false;
  bool correct = false;
  std::vector<std::string> failed;
  double candidate_us = 0;
  double wall_check_ratio = 0;
  pid_t sandbox = 0;
};

Judged judge(EvaluationEngine& engine, const std::string& task, const std::string& name, const std::string& source) {
  capnp::MallocMessageBuilder result_message, verdict_message;
  auto result = result_message.initRoot<drk::msg::EvalResult>();
  auto status = engine.evaluate(CandidateInput{"isolation/" + name, task, drk::kernels::DeviceKind::cpu, source}, result);
  DRK_REQUIRE_MESSAGE(status.ok(), (status.ok() ? "" : status.error().message));
  auto verdict = verdict_message.initRoot<drk::msg::Verdict>();
  drk::verifier::verify(result.asReader(), verdict);
  Judged judged;
  judged.honest = verdict.getHonest();
  judged.correct = result.getCorrect();
  for (auto check : verdict.getFailedChecks()) judged.failed.emplace_back(check.getCode().cStr());
  judged.candidate_us = result.getCandidateTiming().getMedianUs();
  judged.wall_check_ratio = result.getEvidence().getWallCheckRatio();
  judged.sandbox = engine.sandbox_pid();
  // Printed, not logged: doctest's INFO shows a text built with << as a pointer (docs/pitfalls.md #9).
  if (!judged.honest) {
    std::string failed;
    for (const auto& code : judged.failed) failed += " " + code;
    std::printf("%s: failed%s: %s\n", name.c_str(), failed.c_str(), result.getErrorText().cStr());
  }
  return judged;
}

}  // namespace

DRK_TEST_CASE("each candidate runs in a sandbox of its own, and the sandbox is gone after it") {
  drk::testing::TestEngine engine("isolation-pids", quick_options());
  const std::string relu = drk::testing::candidate_source("relu.cpp");
  const Judged first = judge(*engine, "relu", "first", relu);
  const Judged second = judge(*engine, "relu", "second", relu);
  DRK_CHECK(first.honest);
  DRK_CHECK(second.honest);
  DRK_CHECK(first.sandbox > 0);
  DRK_CHECK(second.sandbox > 0);
  DRK_CHECK(first.sandbox != second.sandbox);
  // Killed at the end of its evaluation (its zygote reaps it): no process is left with its pid.
  for (int wait = 0; wait < 200 && ::kill(first.sandbox, 0) == 0; ++wait) ::usleep(10000);
  DRK_CHECK(::kill(first.sandbox, 0) != 0);
}

DRK_TEST_CASE("an honest candidate after each hostile one is judged as it is alone") {
  const std::string relu = drk::testing::candidate_source("relu.cpp");
  drk::testing::TestEngine alone_engine("isolation-alone", quick_options());

  drk::testing::TestEngine shared("isolation-shared", quick_options());
  struct Hostile {
    const char* file;
    const char* task;
  };
  for (const Hostile hostile : {Hostile{"patches_clock_in_libc.cpp", "relu"},
                                Hostile{"hands_work_to_thread_from_global_object.cpp", "relu"},
                                Hostile{"returns_while_global_thread_writes.cpp", "relu"},
                                Hostile{"spins_thread_to_slow_reference.cpp", "relu"},
                                Hostile{"spins_child_to_slow_reference.cpp", "relu"},
                                Hostile{"fork_bomb.cpp", "relu"},
                                Hostile{"memory_bomb.cpp", "relu"},
                                Hostile{"sets_flush_to_zero.cpp", "relu"}}) {
    const std::string hostile_file = hostile.file;
    DRK_INFO(hostile_file);
    // Alone on an engine of its own, just before, so that the two timings see the same load.
    const Judged alone = judge(*alone_engine, "relu", "alone", relu);
    DRK_REQUIRE(alone.honest);
    DRK_REQUIRE(alone.candidate_us > 0);
    const Judged hacked = judge(*shared, hostile.task, hostile.file, hack_source(hostile.file));
    DRK_CHECK_FALSE(hacked.honest);
    const Judged after = judge(*shared, "relu", std::string("relu after ") + hostile.file, relu);
    DRK_CHECK(after.honest);
    DRK_CHECK(after.correct);
    DRK_CHECK(after.failed == alone.failed);
    // A patched clock left behind would read about 10 (timer_mismatch from 3). How fast the
    // honest candidate runs beside a hostile one is a benchmark's question, not this test's
    // (`drk bench containment`; a band here failed once on a loaded machine, and a bound of 2
    // once read 2.8 under ctest -j2 on 2 cores).
    DRK_CHECK(after.wall_check_ratio < 5.0);
    // Nothing of the hostile candidate is left: its sandbox is gone, and with it its threads.
    DRK_CHECK(after.sandbox != hacked.sandbox);
    for (int wait = 0; wait < 200 && ::kill(hacked.sandbox, 0) == 0; ++wait) ::usleep(10000);
    DRK_CHECK(::kill(hacked.sandbox, 0) != 0);
  }
}
