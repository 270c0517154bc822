// /metrics of a run from a real archive and a live view: evaluations by outcome, phase
// histograms in seconds, mailbox depths, restarts, dead letters; and promtool accepts the text.
#include "tools/observe/run_metrics.h"

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"
#include "tests/support/promtool.h"
#include "tests/support/run_dir.h"
#include "tests/support/scored_records.h"

namespace {

using drk::archivist::Archive;
using drk::observe::RunRecords;
using drk::observe::run_metrics;
using drk::testing::record_scored;
using drk::testing::RunDir;

bool has_line(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

std::string metrics_of_a_small_run(const RunDir& dir) {
  dir.write("run/topology.yaml", "experiment:\n  tasks: [relu, softmax]\n");
  const std::string run_dir = dir.file("run");
  auto archive = Archive::open(Archive::default_path(run_dir));
  DRK_REQUIRE(archive.ok());
  record_scored(*archive, {.id = "a", .task = "relu", .load_ms = 20, .timing_ms = 2000});
  record_scored(*archive, {.id = "b", .task = "softmax", .failed_checks = {"inputs_mutated"}, .load_ms = 3});
  record_scored(*archive, {.id = "c", .task = "softmax", .screened = true});
  drk::testing::record_step(*archive, 0, 0.5);
  RunRecords records(run_dir);
  DRK_REQUIRE(records.refresh().ok());
  drk::runtime::SystemView system;
  drk::runtime::ActorView actor;
  actor.name = "oracle";
  actor.role = "oracle";
  actor.process = "oracle";
  actor.mailbox_depth = 7;
  actor.dead_letters = 2;
  actor.messages_handled = 40;
  system.actors.push_back(actor);
  drk::runtime::ProcessView process;
  process.name = "oracle";
  process.restarts = 1;
  system.processes.push_back(process);
  return run_metrics(records, system);
}

}  // namespace

DRK_TEST_CASE("/metrics counts evaluations by outcome, histograms each phase in seconds and shows the live view") {
  RunDir dir;
  const std::string text = metrics_of_a_small_run(dir);
  DRK_CHECK(has_line(text, "drk_evaluations_total{outcome=\"correct\"} 1"));
  DRK_CHECK(has_line(text, "drk_evaluations_total{outcome=\"hacked\"} 1"));
  DRK_CHECK(has_line(text, "drk_evaluations_total{outcome=\"screened\"} 1"));
  DRK_CHECK(has_line(text, "drk_verifier_failed_checks_total{check=\"inputs_mutated\"} 1"));
  // Screened candidates were not evaluated: two evaluations in each histogram.
  DRK_CHECK(has_line(text, "drk_evaluation_phase_seconds_count{phase=\"load\"} 2"));
  DRK_CHECK(has_line(text, "drk_evaluation_phase_seconds_sum{phase=\"load\"} 0.023"));
  DRK_CHECK(has_line(text, "drk_evaluation_phase_seconds_bucket{phase=\"timing\",le=\"1\"} 1"));
  DRK_CHECK(has_line(text, "drk_evaluation_phase_seconds_bucket{phase=\"timing\",le=\"+Inf\"} 2"));
  DRK_CHECK(has_line(text, "drk_actor_mailbox_depth{actor=\"oracle\",role=\"oracle\",process=\"oracle\"} 7"));
  DRK_CHECK(has_line(text, "drk_actor_dead_letters_total{actor=\"oracle\",role=\"oracle\",process=\"oracle\"} 2"));
  DRK_CHECK(has_line(text, "drk_actor_messages_handled_total{actor=\"oracle\",role=\"oracle\",process=\"oracle\"} 40"));
  DRK_CHECK(has_line(text, "drk_process_restarts_total{process=\"oracle\"} 1"));
  DRK_CHECK(has_line(text, "drk_training_step 0"));
  DRK_CHECK(has_line(text, "drk_tasks_fast_p_ratio{p=\"0\"} 0.5"));
}

DRK_TEST_CASE("promtool check metrics accepts a run's /metrics") {
  RunDir dir;
  const auto checked = drk::testing::promtool_check(metrics_of_a_small_run(dir));
  if (!checked) {
    DRK_MESSAGE(drk::testing::kPromtoolMissing);
    return;
  }
  DRK_CHECK_MESSAGE(checked->exit_code == 0, checked->output);
}
