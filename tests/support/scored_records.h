// Records for a test's archive (actors/archivist/archive.h), written as the Archivist writes them:
// one scored candidate with its evaluation's outcome, phases and Evaluator, or one step report.
//
// Thread-safety: one thread per archive.
#pragma once

#include <capnp/message.h>

#include <string>
#include <vector>

#include "actors/archivist/archive.h"
#include "tests/doctest_drk.h"

namespace drk::testing {

struct ScoredSpec {
  std::string id;
  std::string task;
  uint32_t step = 0;
  std::string evaluator = "evaluator-0";
  bool cuda = false;
  bool correct = true;
  std::vector<std::string> failed_checks;  // none: honest
  bool screened = false;
  bool compile_cached = false;
  double speedup = 1;
  double eval_ms = 100, compile_wait_ms = 10, load_ms = 20, correctness_ms = 30, timing_ms = 40;
};

inline void record_scored(archivist::Archive& archive, const ScoredSpec& spec) {
  capnp::MallocMessageBuilder message;
  auto scored = message.initRoot<msg::Scored>();
  scored.setScreened(spec.screened);
  auto verdict = scored.initVerdict();
  verdict.setHonest(spec.failed_checks.empty());
  auto checks = verdict.initFailedChecks(static_cast<unsigned>(spec.failed_checks.size()));
  for (unsigned at = 0; at < checks.size(); ++at) checks[at].setCode(spec.failed_checks[at]);
  auto result = verdict.initResult();
  result.setEvaluator(spec.evaluator);
  result.setCompiled(true);
  result.setCompileCached(spec.compile_cached);
  result.setCorrect(spec.correct);
  result.setSpeedup(spec.correct ? spec.speedup : 0);
  result.setEvalMs(spec.eval_ms);
  result.setCompileWaitMs(spec.compile_wait_ms);
  result.setLoadMs(spec.load_ms);
  result.setCorrectnessMs(spec.correctness_ms);
  result.setTimingMs(spec.timing_ms);
  auto candidate = result.initCandidate();
  candidate.setId(spec.id);
  candidate.setTask(spec.task);
  candidate.setStep(spec.step);
  candidate.setDevice(spec.cuda ? msg::Device::CUDA : msg::Device::CPU);
  candidate.setLanguage(spec.cuda ? msg::Language::CUDA : msg::Language::CPP);
  candidate.setSource("// source of " + spec.id);
  DRK_REQUIRE(archive.record_scored(scored.asReader()).ok());
}

inline void record_step(archivist::Archive& archive, uint32_t step, double mean_reward, bool finished = false) {
  capnp::MallocMessageBuilder message;
  auto report = message.initRoot<msg::StepReport>();
  report.setStep(step);
  report.setMeanReward(mean_reward);
  report.setBestSpeedup(1.5);
  report.setCorrectFraction(0.5);
  report.setSeconds(12);
  report.setFinished(finished);
  DRK_REQUIRE(archive.record_step(report.asReader()).ok());
}

}  // namespace drk::testing
