// The run's snapshot from a real archive as the Archivist writes it: outcomes and the Verifier's
// reasons, Fast@p cumulative over steps and the run's tasks, each task's best kernel (or newest
// candidate), Evaluator utilisation and busy fractions, the compile cache; read incrementally (a
// candidate recorded twice counts once); a run without an archive yet; and the live view's actors,
// processes and nodes.
#include "tools/observe/run_snapshot.h"

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"
#include "tests/support/scored_records.h"

namespace {

using drk::archivist::Archive;
using drk::observe::RunRecords;
using drk::observe::run_snapshot;
using drk::testing::record_scored;
using drk::testing::record_step;
using drk::testing::RunDir;

drk::runtime::SystemView live_view() {
  drk::runtime::SystemView system;
  system.topology = "quickstart";
  system.training = "step 1/2 reward 0.50";
  drk::runtime::ActorView actor;
  actor.name = "evaluator-0";
  actor.role = "evaluator";
  actor.process = "evaluator-0";
  actor.status = drk::runtime::ActorStatus::running;
  actor.mailbox_depth = 3;
  actor.mailbox_capacity = 64;
  actor.messages_per_second = 2.5;
  actor.dead_letters = 1;
  system.actors.push_back(actor);
  drk::runtime::ProcessView process;
  process.name = "evaluator-0";
  process.pid = 42;
  process.restarts = 2;
  process.recent_causes = {"killed by SIGKILL", "exited with code 70"};
  system.processes.push_back(process);
  drk::runtime::NodeView node;
  node.name = "gpu1";
  node.status = drk::runtime::NodeStatus::joined;
  node.last_heartbeat_age_seconds = 0.4;
  system.nodes.push_back(node);
  return system;
}

}  // namespace

DRK_TEST_CASE("a run without an archive yet is a snapshot with nothing recorded") {
  RunDir dir;
  RunRecords records(dir.path().string());
  DRK_REQUIRE(records.refresh().ok());
  const auto snapshot = run_snapshot(records, live_view(), 1234);
  DRK_CHECK(snapshot["run"]["topology"] == "quickstart");
  DRK_CHECK(snapshot["run"]["now_unix_ms"] == 1234);
  DRK_CHECK(snapshot["run"]["finished"] == false);
  DRK_CHECK(snapshot["steps"].empty());
  DRK_CHECK(snapshot["outcomes"]["correct"] == 0);
  DRK_CHECK(snapshot["tasks"].empty());
}

DRK_TEST_CASE("the snapshot counts outcomes, reasons, Fast@p by step, best kernels and Evaluator use from the archive") {
  RunDir dir;
  dir.write("run/topology.yaml", "name: t\nexperiment:\n  steps: 2\n  tasks: [relu, softmax, matmul, gelu]\n");
  const std::string run_dir = dir.file("run");
  auto archive = Archive::open(Archive::default_path(run_dir));
  DRK_REQUIRE(archive.ok());
  // Long evaluations, so that the milliseconds between the records below do not count.
  record_scored(*archive, {.id = "s0/relu/0/t1", .task = "relu", .step = 0, .speedup = 1.3, .eval_ms = 1e6,
                           .correctness_ms = 2e5, .timing_ms = 3e5});
  record_scored(*archive, {.id = "s0/softmax/0/t1", .task = "softmax", .step = 0, .evaluator = "evaluator-1",
                           .correct = true, .failed_checks = {"outputs_unwritten"}, .speedup = 50, .eval_ms = 5e5});
  record_scored(*archive, {.id = "s0/matmul/0/t1", .task = "matmul", .step = 0, .correct = false});
  record_step(*archive, 0, 0.25);

  RunRecords records(run_dir);
  DRK_REQUIRE(records.refresh().ok());
  auto snapshot = run_snapshot(records, live_view(), 1);
  DRK_CHECK(snapshot["run"]["steps_planned"] == 2);
  DRK_CHECK(snapshot["outcomes"]["correct"] == 1);
  DRK_CHECK(snapshot["outcomes"]["hacked"] == 1);
  DRK_CHECK(snapshot["outcomes"]["failed"] == 1);
  DRK_CHECK(snapshot["outcomes"]["screened"] == 0);
  DRK_REQUIRE(snapshot["verifier_reasons"].size() == 1);
  DRK_CHECK(snapshot["verifier_reasons"][0]["check"] == "outputs_unwritten");
  DRK_CHECK(snapshot["compile_cache"]["misses"] == 3);
  DRK_REQUIRE(snapshot["steps"].size() == 1);
  // Of four tasks, relu has a verified kernel (1.3x): the hacked 50x counts for nothing.
  DRK_CHECK(snapshot["steps"][0]["fast_p"]["0"] == 0.25);
  DRK_CHECK(snapshot["steps"][0]["fast_p"]["1.2"] == 0.25);
  DRK_CHECK(snapshot["steps"][0]["fast_p"]["1.5"] == 0.0);
  DRK_REQUIRE(snapshot["tasks"].size() == 4);
  DRK_CHECK(snapshot["tasks"][0]["task"] == "relu");
  DRK_CHECK(snapshot["tasks"][0]["verdict"] == "correct");
  DRK_CHECK(snapshot["tasks"][0]["best_speedup"] == 1.3);
  DRK_CHECK(snapshot["tasks"][0]["source"] == "// source of s0/relu/0/t1");
  DRK_CHECK(snapshot["tasks"][1]["verdict"] == "hacked");
  DRK_CHECK(snapshot["tasks"][1]["failed_checks"][0] == "outputs_unwritten");
  DRK_CHECK(snapshot["tasks"][1]["best_speedup"] == 0.0);
  DRK_CHECK(snapshot["tasks"][2]["verdict"] == "failed");
  DRK_CHECK(snapshot["tasks"][3]["task"] == "gelu");
  DRK_CHECK(snapshot["tasks"][3]["verdict"] == "none");
  DRK_REQUIRE(snapshot["evaluators"].size() == 2);
  DRK_CHECK(snapshot["evaluators"][0]["name"] == "evaluator-0");
  DRK_CHECK(snapshot["evaluators"][0]["evaluations"] == 2);
  DRK_CHECK(snapshot["evaluators"][0]["utilisation"].get<double>() == doctest::Approx(1.0).epsilon(0.01));
  DRK_CHECK(snapshot["evaluators"][0]["device_busy_fraction"].get<double>() == doctest::Approx(0.5).epsilon(0.01));
  DRK_CHECK(snapshot["evaluators"][0]["gpu_busy_fraction"] == 0.0);  // a CPU run
  DRK_CHECK(snapshot["evaluators"][1]["utilisation"].get<double>() == doctest::Approx(0.5).epsilon(0.01));

  // Step 1 adds a faster relu and a verified matmul; relu's first record arrives again (a
  // restarted Oracle sends it twice): counted once.
  record_scored(*archive, {.id = "s1/relu/0/t1", .task = "relu", .step = 1, .compile_cached = true, .speedup = 2.5});
  record_scored(*archive, {.id = "s1/matmul/0/t1", .task = "matmul", .step = 1, .speedup = 1.1});
  record_scored(*archive, {.id = "s0/relu/0/t1", .task = "relu", .step = 0, .speedup = 1.3, .eval_ms = 1e6,
                           .correctness_ms = 2e5, .timing_ms = 3e5});
  record_scored(*archive, {.id = "s1/gelu/0/t1", .task = "gelu", .step = 1, .screened = true});
  record_step(*archive, 1, 0.75, /*finished=*/true);
  DRK_REQUIRE(records.refresh().ok());
  snapshot = run_snapshot(records, live_view(), 2);
  DRK_CHECK(snapshot["run"]["finished"] == true);
  DRK_CHECK(snapshot["outcomes"]["correct"] == 3);
  DRK_CHECK(snapshot["outcomes"]["screened"] == 1);
  DRK_CHECK(snapshot["compile_cache"]["hits"] == 1);
  DRK_CHECK(snapshot["compile_cache"]["misses"] == 4);
  DRK_REQUIRE(snapshot["steps"].size() == 2);
  DRK_CHECK(snapshot["steps"][0]["fast_p"]["0"] == 0.25);  // step 0 as it was
  DRK_CHECK(snapshot["steps"][1]["mean_reward"] == 0.75);
  DRK_CHECK(snapshot["steps"][1]["fast_p"]["0"] == 0.5);
  DRK_CHECK(snapshot["steps"][1]["fast_p"]["1.0"] == 0.5);
  DRK_CHECK(snapshot["steps"][1]["fast_p"]["2.0"] == 0.25);
  DRK_CHECK(snapshot["tasks"][0]["candidate_id"] == "s1/relu/0/t1");
  DRK_CHECK(snapshot["tasks"][3]["verdict"] == "none");  // gelu's only candidate was screened
}

DRK_TEST_CASE("the snapshot shows the live view's actors, processes with their last cause, and nodes") {
  RunDir dir;
  RunRecords records(dir.path().string());
  const auto snapshot = run_snapshot(records, live_view(), 0);
  DRK_CHECK(snapshot["run"]["training"] == "step 1/2 reward 0.50");
  DRK_REQUIRE(snapshot["actors"].size() == 1);
  DRK_CHECK(snapshot["actors"][0]["state"] == "running");
  DRK_CHECK(snapshot["actors"][0]["mailbox_depth"] == 3);
  DRK_CHECK(snapshot["actors"][0]["mailbox_capacity"] == 64);
  DRK_CHECK(snapshot["actors"][0]["messages_per_second"] == 2.5);
  DRK_CHECK(snapshot["actors"][0]["dead_letters"] == 1);
  DRK_REQUIRE(snapshot["processes"].size() == 1);
  DRK_CHECK(snapshot["processes"][0]["restarts"] == 2);
  DRK_CHECK(snapshot["processes"][0]["last_cause"] == "exited with code 70");
  DRK_CHECK(snapshot["processes"][0]["status"] == "running");
  DRK_REQUIRE(snapshot["nodes"].size() == 1);
  DRK_CHECK(snapshot["nodes"][0]["state"] == "joined");
  DRK_CHECK(snapshot["nodes"][0]["last_heartbeat_age_seconds"] == 0.4);
}
