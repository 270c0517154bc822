#include "actors/archivist/archive.h"

#include <algorithm>
#include <cmath>

#include <capnp/message.h>


#include "tests/doctest_drk.h"
#include "tests/support/run_dir.h"

using drk::archivist::Archive;

namespace {

struct JudgedOn {
  drk::msg::Device device = drk::msg::Device::CPU;
  const char* architecture = "x86_64";
  drk::msg::DType dtype = drk::msg::DType::FLOAT32;
};

void record(Archive& archive, const std::string& id, const std::string& task, bool correct,
            bool honest, double speedup, double reference_us = 100.0, JudgedOn judged_on = {}) {
  capnp::MallocMessageBuilder message;
  auto scored = message.initRoot<drk::msg::Scored>();
  scored.setReward(correct && honest ? 0.5 + 0.5 * speedup : 0.0);
  auto verdict = scored.initVerdict();
  verdict.setHonest(honest);
  if (!honest) {
    auto checks = verdict.initFailedChecks(1);
    checks[0].setCode("outputs_unwritten");
  }
  auto result = verdict.initResult();
  result.setCompiled(true);
  result.setDevice(judged_on.device);
  result.setArchitecture(judged_on.architecture);
  result.setDtype(judged_on.dtype);
  result.setCorrect(correct);
  result.setSpeedup(speedup);
  result.getCandidateTiming().setMedianUs(reference_us / (speedup > 0 ? speedup : 1));
  result.getReferenceTiming().setMedianUs(reference_us);
  auto candidate = result.initCandidate();
  candidate.setId(id);
  candidate.setTask(task);
  candidate.setSource("// source of " + id);
  DRK_REQUIRE(archive.record_scored(scored.asReader()).ok());
}

}  // namespace

DRK_TEST_CASE("the best kernel per task is the fastest correct and honest one") {
  drk::testing::RunDir dir;
  auto archive = Archive::open((dir.path() / "a.sqlite").string());
  DRK_REQUIRE(archive.ok());
  record(*archive, "s0/relu/0/t1", "relu", true, true, 1.2);
  record(*archive, "s0/relu/1/t1", "relu", true, true, 1.7);
  record(*archive, "s0/relu/2/t1", "relu", true, false, 9.0);   // dishonest: not counted
  record(*archive, "s0/relu/3/t1", "relu", false, true, 0.0);   // incorrect
  record(*archive, "s0/softmax/0/t1", "softmax", true, true, 0.8);
  record(*archive, "s0/relu/1/t1", "relu", true, true, 1.7);    // delivered twice
  auto best = archive->best_per_task();
  DRK_REQUIRE(best.ok());
  DRK_REQUIRE(best->size() == 2);
  DRK_CHECK((*best)[0].task == "relu");
  DRK_CHECK((*best)[0].candidate_id == "s0/relu/1/t1");
  DRK_CHECK((*best)[0].speedup == doctest::Approx(1.7));
  DRK_CHECK((*best)[1].task == "softmax");
  auto tallies = archive->tallies();
  DRK_REQUIRE(tallies.ok());
  DRK_CHECK((*tallies)[0].candidates == 4);
  DRK_CHECK((*tallies)[0].verified == 2);
  DRK_CHECK((*tallies)[0].rejected == 1);
  DRK_CHECK((*tallies)[0].reference_median_us == doctest::Approx(100.0));
  auto source = archive->source_of("s0/softmax/0/t1");
  DRK_REQUIRE(source.ok());
  DRK_CHECK(*source == "// source of s0/softmax/0/t1");
  DRK_CHECK(archive->source_of("nope").error().code == drk::Errc::not_found);
}

DRK_TEST_CASE("a task judged on two devices has a best kernel for each, tagged with what it ran on") {
  drk::testing::RunDir dir;
  auto archive = Archive::open((dir.path() / "a.sqlite").string());
  DRK_REQUIRE(archive.ok());
  const JudgedOn h200{drk::msg::Device::CUDA, "sm_90", drk::msg::DType::FLOAT32};
  const JudgedOn a100{drk::msg::Device::CUDA, "sm_80", drk::msg::DType::FLOAT32};
  record(*archive, "s0/relu/0/t1", "relu", true, true, 1.2);
  record(*archive, "s0/relu/1/t1", "relu", true, true, 3.0, 100.0, h200);
  record(*archive, "s0/relu/2/t1", "relu", true, true, 2.5, 100.0, h200);
  record(*archive, "s0/relu/3/t1", "relu", true, true, 2.0, 100.0, a100);
  record(*archive, "s0/relu@float16/0/t1", "relu@float16", true, true, 1.5, 100.0,
         {drk::msg::Device::CUDA, "sm_90", drk::msg::DType::FLOAT16});
  auto best = archive->best_per_task();
  DRK_REQUIRE(best.ok());
  DRK_REQUIRE(best->size() == 4);
  // By task, then device, architecture and dtype.
  DRK_CHECK(drk::archivist::judged_on((*best)[0]) == "cpu x86_64 float32");
  DRK_CHECK((*best)[0].candidate_id == "s0/relu/0/t1");
  DRK_CHECK(drk::archivist::judged_on((*best)[1]) == "cuda sm_80 float32");
  DRK_CHECK((*best)[1].candidate_id == "s0/relu/3/t1");
  DRK_CHECK(drk::archivist::judged_on((*best)[2]) == "cuda sm_90 float32");
  DRK_CHECK((*best)[2].candidate_id == "s0/relu/1/t1");
  DRK_CHECK((*best)[3].task == "relu@float16");
  DRK_CHECK((*best)[3].dtype == "float16");
}

DRK_TEST_CASE("a task's reference time is the median over its correct evaluations, not the outlier") {
  drk::testing::RunDir dir;
  auto archive = Archive::open((dir.path() / "a.sqlite").string());
  DRK_REQUIRE(archive.ok());
  record(*archive, "s0/relu/0/t1", "relu", true, true, 1.0, 100.0);
  record(*archive, "s0/relu/1/t1", "relu", true, true, 1.0, 110.0);
  record(*archive, "s0/relu/2/t1", "relu", true, true, 10.0, 1000.0);  // a reference timed 10x slow
  record(*archive, "s0/relu/3/t1", "relu", false, true, 0.0, 5000.0);  // incorrect: not counted
  auto tallies = archive->tallies();
  DRK_REQUIRE(tallies.ok());
  DRK_REQUIRE(tallies->size() == 1);
  DRK_CHECK((*tallies)[0].reference_median_us == doctest::Approx(110.0));
}

DRK_TEST_CASE("steps and policy versions are kept in order and survive reopening") {
  drk::testing::RunDir dir;
  const auto path = (dir.path() / "a.sqlite").string();
  {
    auto archive = Archive::open(path);
    DRK_REQUIRE(archive.ok());
    for (uint32_t step : {1u, 0u}) {
      capnp::MallocMessageBuilder message;
      auto report = message.initRoot<drk::msg::StepReport>();
      report.setStep(step);
      report.setMeanReward(step == 0 ? 0.4 : 0.9);
      report.setFinished(step == 1);
      DRK_REQUIRE(archive->record_step(report.asReader()).ok());
    }
    capnp::MallocMessageBuilder message;
    auto weights = message.initRoot<drk::msg::PolicyWeights>();
    weights.setVersion(3);
    const unsigned char bytes[] = {1, 2, 3};
    weights.setParameters(kj::arrayPtr(bytes, 3));
    DRK_REQUIRE(archive->record_policy(weights.asReader()).ok());
  }
  auto reopened = Archive::open(path, /*read_only=*/true);
  DRK_REQUIRE(reopened.ok());
  auto steps = reopened->steps();
  DRK_REQUIRE(steps.ok());
  DRK_REQUIRE(steps->size() == 2);
  DRK_CHECK((*steps)[0].mean_reward == doctest::Approx(0.4));
  DRK_CHECK((*steps)[1].finished);
}

DRK_TEST_CASE("screened candidates and each step's screening counts are on record") {
  drk::testing::RunDir dir;
  auto archive = Archive::open((dir.path() / "a.sqlite").string());
  DRK_REQUIRE(archive.ok());
  {
    capnp::MallocMessageBuilder message;
    auto report = message.initRoot<drk::msg::StepReport>();
    report.setStep(0);
    report.setMeasured(40);
    report.setScreened(24);
    DRK_REQUIRE(archive->record_step(report.asReader()).ok());
  }
  capnp::MallocMessageBuilder message;
  auto scored = message.initRoot<drk::msg::Scored>();
  scored.setReward(1.4);
  scored.setScreened(true);
  auto candidate = scored.initVerdict().initResult().initCandidate();
  candidate.setId("s0/relu/0/t1");
  candidate.setTask("relu");
  DRK_REQUIRE(archive->record_scored(scored.asReader()).ok());
  auto steps = archive->steps();
  DRK_REQUIRE(steps.ok());
  DRK_REQUIRE(steps->size() == 1);
  DRK_CHECK((*steps)[0].measured == 40);
  DRK_CHECK((*steps)[0].screened == 24);
  // A screened candidate is no verified kernel, whatever its predicted reward.
  auto best = archive->best_per_task();
  DRK_REQUIRE(best.ok());
  DRK_CHECK(best->empty());
}

DRK_TEST_CASE("a missing archive opened for reading names the file") {
  auto archive = Archive::open("/nonexistent/dir/archive.sqlite", true);
  DRK_REQUIRE_FALSE(archive.ok());
  DRK_CHECK(archive.error().message.find("/nonexistent/dir/archive.sqlite") != std::string::npos);
}

DRK_TEST_CASE("an archive whose results table predates the evaluation phases and the tags gains their columns when opened for writing") {
  drk::testing::RunDir dir;
  const std::string path = (dir.path() / "old.sqlite").string();
  {
    sqlite3* db = nullptr;
    DRK_REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
    // The results table as runs before the phase columns wrote it.
    DRK_REQUIRE(sqlite3_exec(db,
                             "CREATE TABLE results (candidate_id TEXT PRIMARY KEY, evaluator TEXT, compiled "
                             "INTEGER, compile_log TEXT, compile_cached INTEGER, compile_ms REAL, sandbox TEXT, "
                             "correct INTEGER, trials INTEGER, trials_passed INTEGER, max_abs_error REAL, "
                             "max_rel_error REAL, error_text TEXT, candidate_median_us REAL, candidate_p10_us REAL, "
                             "candidate_p90_us REAL, candidate_cv REAL, reference_median_us REAL, reference_p10_us "
                             "REAL, reference_p90_us REAL, reference_cv REAL, speedup REAL, eval_ms REAL);",
                             nullptr, nullptr, nullptr) == SQLITE_OK);
    sqlite3_close(db);
  }
  auto archive = Archive::open(path);
  DRK_REQUIRE_MESSAGE(archive.ok(), archive.error().message);
  capnp::MallocMessageBuilder message;
  auto result = message.initRoot<drk::msg::Scored>().initVerdict().initResult();
  result.initCandidate().setId("s0/relu/0/t1");
  result.setLoadMs(12.5);
  result.setTimingMs(40);
  result.setArchitecture("sm_90");
  DRK_REQUIRE(archive->record_scored(message.getRoot<drk::msg::Scored>().asReader()).ok());
  sqlite3* db = nullptr;
  DRK_REQUIRE(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK);
  sqlite3_stmt* query = nullptr;
  DRK_REQUIRE(sqlite3_prepare_v2(db, "SELECT load_ms, timing_ms, compile_wait_ms, architecture FROM results", -1, &query, nullptr) ==
              SQLITE_OK);
  DRK_REQUIRE(sqlite3_step(query) == SQLITE_ROW);
  DRK_CHECK(sqlite3_column_double(query, 0) == 12.5);
  DRK_CHECK(sqlite3_column_double(query, 1) == 40.0);
  DRK_CHECK(sqlite3_column_double(query, 2) == 0.0);
  DRK_CHECK(std::string(reinterpret_cast<const char*>(sqlite3_column_text(query, 3))) == "sm_90");
  sqlite3_finalize(query);
  sqlite3_close(db);
}

DRK_TEST_CASE("a task's tally counts the candidates tried at other shapes and those that did not handle them all") {
  drk::testing::RunDir dir;
  auto archive = Archive::open((dir.path() / "a.sqlite").string());
  DRK_REQUIRE(archive.ok());
  auto record_shapes = [&](const std::string& id, uint32_t tried, uint32_t handled, const char* failed_check) {
    capnp::MallocMessageBuilder message;
    auto verdict = message.initRoot<drk::msg::Scored>().initVerdict();
    verdict.setHonest(failed_check == nullptr);
    if (failed_check != nullptr) verdict.initFailedChecks(1)[0].setCode(failed_check);
    auto result = verdict.initResult();
    result.setCompiled(true);
    result.setCorrect(failed_check == nullptr);
    result.getEvidence().setRangeShapesTried(tried);
    result.getEvidence().setRangeShapesHandled(handled);
    auto candidate = result.initCandidate();
    candidate.setId(id);
    candidate.setTask("relu");
    DRK_REQUIRE(archive->record_scored(message.getRoot<drk::msg::Scored>().asReader()).ok());
  };
  record_shapes("s0/relu/0/t1", 4, 4, nullptr);            // handled every drawn shape
  record_shapes("s0/relu/1/t1", 4, 2, nullptr);            // declined two
  record_shapes("s0/relu/2/t1", 1, 0, "hardcoded_shape");  // wrong at the first drawn shape
  record_shapes("s0/relu/3/t1", 0, 0, "hardcoded_shape");  // wrong at the second shapes
  record_shapes("s0/relu/4/t1", 0, 0, "outputs_unwritten");  // never tried at other shapes
  auto tallies = archive->tallies();
  DRK_REQUIRE(tallies.ok());
  DRK_REQUIRE(tallies->size() == 1);
  DRK_CHECK((*tallies)[0].candidates == 5);
  DRK_CHECK((*tallies)[0].tried_at_other_shapes == 4);
  DRK_CHECK((*tallies)[0].hardcoded_shapes == 3);
  const drk::archivist::OtherShapes run = drk::archivist::other_shapes(*tallies);
  DRK_CHECK(run.tried == 4);
  DRK_CHECK(run.hardcoded == 3);
}

DRK_TEST_CASE("timed shapes: counted as shapes tried, a declined one as not handled; the best kernel carries its speedup over them") {
  drk::testing::RunDir dir;
  auto archive = Archive::open((dir.path() / "a.sqlite").string());
  DRK_REQUIRE(archive.ok());
  capnp::MallocMessageBuilder message;
  auto verdict = message.initRoot<drk::msg::Scored>().initVerdict();
  verdict.setHonest(true);
  auto result = verdict.initResult();
  result.setCompiled(true);
  result.setCorrect(true);
  result.setSpeedup(1.1);
  result.setShapesSpeedup(1.4);
  result.getEvidence().setRangeShapesTried(3);
  result.getEvidence().setRangeShapesHandled(3);
  auto timed = result.initTimedShapes(2);
  timed[0].setSpeedup(1.8);
  timed[1].setDeclined(true);
  auto candidate = result.initCandidate();
  candidate.setId("s0/rms_norm/0/t1");
  candidate.setTask("rms_norm");
  DRK_REQUIRE(archive->record_scored(message.getRoot<drk::msg::Scored>().asReader()).ok());
  record(*archive, "s0/relu/0/t1", "relu", true, true, 1.2);
  auto best = archive->best_per_task();
  DRK_REQUIRE(best.ok());
  DRK_REQUIRE(best->size() == 2);
  DRK_CHECK((*best)[0].task == "relu");
  DRK_CHECK((*best)[0].shapes_speedup == 0.0);
  DRK_CHECK((*best)[1].shapes_speedup == doctest::Approx(1.4));
  auto tallies = archive->tallies();
  DRK_REQUIRE(tallies.ok());
  const auto rms_norm = std::find_if(tallies->begin(), tallies->end(),
                                     [](const auto& tally) { return tally.task == "rms_norm"; });
  DRK_REQUIRE(rms_norm != tallies->end());
  DRK_CHECK(rms_norm->tried_at_other_shapes == 1);
  DRK_CHECK(rms_norm->hardcoded_shapes == 1);  // 4 of its 5 shapes handled
}

DRK_TEST_CASE("suite scores: Fast@p over every task, the geometric mean over the verified ones") {
  using drk::archivist::BestKernel;
  std::vector<drk::archivist::TaskTally> tallies(4);
  tallies[0].task = "a";
  tallies[1].task = "b";
  tallies[2].task = "c";
  tallies[3].task = "d";  // no verified kernel
  std::vector<BestKernel> best(4);
  best[0].task = "a", best[0].speedup = 0.5;
  best[1].task = "b", best[1].speedup = 2.0;
  best[2].task = "c", best[2].speedup = 1.1;
  best[3].task = "c", best[3].speedup = 1.3;  // c judged in another dtype too: its best counts
  const auto scores = drk::archivist::suite_scores(tallies, best);
  DRK_CHECK(scores.tasks == 4);
  DRK_CHECK(scores.verified == 3);
  DRK_CHECK(scores.fast_1_0 == 2);
  DRK_CHECK(scores.fast_1_2 == 2);
  DRK_CHECK(scores.geomean_speedup == doctest::Approx(std::cbrt(0.5 * 2.0 * 1.3)));
  // Against each task's median reference time: b's 2.0 came from one slow reference measurement.
  tallies[0].reference_median_us = 50, best[0].candidate_us = 100;  // 0.5
  tallies[1].reference_median_us = 100, best[1].candidate_us = 90;  // 1.11
  tallies[2].reference_median_us = 130, best[2].candidate_us = 100, best[3].candidate_us = 200;  // 1.3, 0.65
  const auto robust = drk::archivist::suite_scores(tallies, best, /*against_median=*/true);
  DRK_CHECK(robust.verified == 3);
  DRK_CHECK(robust.fast_1_0 == 2);
  DRK_CHECK(robust.fast_1_2 == 1);
  DRK_CHECK(robust.geomean_speedup == doctest::Approx(std::cbrt(0.5 * (100.0 / 90.0) * 1.3)));
}
