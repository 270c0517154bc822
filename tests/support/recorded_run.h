// A run's archive and topology.yaml written by a test, as a run's Archivist and head would write
// them, for the tests of what reads runs back (tools/observe): candidates with their verdicts and
// rewards, their turns as training samples (coverage), and step reports.
//
// Thread-safety: one thread. Errors: a record that cannot be written fails the test (DRK_REQUIRE).
#pragma once

#include <capnp/message.h>

#include <fstream>
#include <string>
#include <vector>

#include "actors/archivist/archive.h"
#include "messages/drk.capnp.h"
#include "tests/doctest_drk.h"

namespace drk::testing {

struct RecordedCandidate {
  std::string id;
  std::string task;
  uint32_t step = 0;  // from 0, as the Learner numbers them
  bool correct = true;
  bool honest = true;
  double speedup = 1;
  double coverage = 1;
  std::vector<std::string> failed_checks{};
  std::string source = "extern \"C\" int drk_kernel() { return 0; }";
  std::string summary{};  // the feedback its Generator got
};

// Records `candidate` as the Oracle's Scored and the Learner's Trajectory (one turn).
inline void record_candidate(archivist::Archive& archive, const RecordedCandidate& candidate) {
  capnp::MallocMessageBuilder message;
  auto scored = message.initRoot<msg::Scored>();
  auto verdict = scored.initVerdict();
  auto result = verdict.initResult();
  auto sent = result.initCandidate();
  sent.setId(candidate.id);
  sent.setStep(candidate.step);
  sent.setTrajectoryId(candidate.id + "/t");
  sent.setTurn(1);
  sent.setTask(candidate.task);
  sent.setSource(candidate.source);
  result.setCompiled(true);
  result.setCorrect(candidate.correct);
  result.setTrials(5);
  result.setTrialsPassed(candidate.correct ? 5 : 2);
  result.setSpeedup(candidate.speedup);
  result.initCandidateTiming().setMedianUs(candidate.speedup > 0 ? 100 / candidate.speedup : 0);
  result.initReferenceTiming().setMedianUs(100);
  verdict.setHonest(candidate.honest);
  auto checks = verdict.initFailedChecks(static_cast<unsigned>(candidate.failed_checks.size()));
  for (unsigned i = 0; i < checks.size(); ++i) {
    checks[i].setCode(candidate.failed_checks[i]);
    checks[i].setEvidence("evidence of " + candidate.failed_checks[i]);
  }
  scored.setReward(candidate.correct && candidate.honest ? 0.5 + candidate.speedup : 0);
  scored.setSummary(candidate.summary);
  DRK_REQUIRE(archive.record_scored(scored.asReader()));

  capnp::MallocMessageBuilder trajectory_message;
  auto trajectory = trajectory_message.initRoot<msg::Trajectory>();
  trajectory.setId(candidate.id + "/t");
  trajectory.setStep(candidate.step);
  trajectory.setTask(candidate.task);
  auto turn = trajectory.initTurns(1)[0];
  turn.setCandidateId(candidate.id);
  turn.setCorrect(candidate.correct);
  turn.setHonest(candidate.honest);
  turn.setSpeedup(candidate.speedup);
  turn.setCoverage(candidate.coverage);
  DRK_REQUIRE(archive.record_trajectory(trajectory.asReader()));
}

// Records the StepReport of `step` (from 0).
inline void record_step(archivist::Archive& archive, uint32_t step, double mean_reward, double best_speedup) {
  capnp::MallocMessageBuilder message;
  auto report = message.initRoot<msg::StepReport>();
  report.setStep(step);
  report.setPolicyVersion(step + 1);
  report.setMeanReward(mean_reward);
  report.setBestSpeedup(best_speedup);
  report.setCorrectFraction(0.75);
  report.setTrajectories(4);
  DRK_REQUIRE(archive.record_step(report.asReader()));
}

// RUN_DIR/topology.yaml naming `estimator`.
inline void write_topology(const std::string& run_dir, const std::string& estimator) {
  std::ofstream(run_dir + "/topology.yaml") << "name: test-run\nexperiment:\n  estimator: " << estimator
                                            << "\n  steps: 3\n";
}

}  // namespace drk::testing
