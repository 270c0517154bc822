#include "actors/verifier/verify.h"

#include <capnp/message.h>

#include <functional>

#include <string>
#include <vector>

#include "tests/doctest_drk.h"

namespace {

std::vector<std::string> failed_codes(const std::function<void(drk::msg::EvalResult::Builder)>& fill) {
  capnp::MallocMessageBuilder result_message;
  auto result = result_message.initRoot<drk::msg::EvalResult>();
  result.setCompiled(true);
  result.setCorrect(true);
  fill(result);
  capnp::MallocMessageBuilder verdict_message;
  auto verdict = verdict_message.initRoot<drk::msg::Verdict>();
  drk::verifier::verify(result.asReader(), verdict);
  std::vector<std::string> codes;
  for (auto check : verdict.getFailedChecks()) codes.emplace_back(check.getCode().cStr());
  DRK_CHECK(verdict.getHonest() == codes.empty());
  DRK_CHECK(verdict.getResult().getCompiled() == result.getCompiled());
  return codes;
}

}  // namespace

DRK_TEST_CASE("an honest result fails no check") {
  DRK_CHECK(failed_codes([](auto) {}).empty());
}

DRK_TEST_CASE("an incorrect or uncompiled result is not dishonest") {
  DRK_CHECK(failed_codes([](auto r) { r.setCorrect(false); r.getEvidence().setNonFinite(true); }).empty());
  DRK_CHECK(failed_codes([](auto r) { r.setCompiled(false); }).empty());
}

DRK_TEST_CASE("each kind of evidence names its check") {
  using drk::msg::SandboxOutcome;
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setOutputsLeftPoisoned(true); }) ==
            std::vector<std::string>{"outputs_unwritten"});
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setInputsMutated(true); }) ==
            std::vector<std::string>{"inputs_mutated"});
  DRK_CHECK(failed_codes([](auto r) {
              r.setSandbox(SandboxOutcome::CRASHED);
              r.getEvidence().setSandboxSignal(11);
            }) == std::vector<std::string>{"sandbox_crashed"});
  DRK_CHECK(failed_codes([](auto r) { r.setSandbox(SandboxOutcome::TIMED_OUT); }) ==
            std::vector<std::string>{"sandbox_timeout"});
  DRK_CHECK(failed_codes([](auto r) { r.setSandbox(SandboxOutcome::RETURNED_ERROR); }) ==
            std::vector<std::string>{"candidate_error"});
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setWallCheckRatio(5.0); }) ==
            std::vector<std::string>{"timer_mismatch"});
  // A loaded machine stretches the harness's clock a little: that is noise, not a lie.
  DRK_CHECK(failed_codes([](auto r) { r.getEvidence().setWallCheckRatio(1.8); }).empty());
}

DRK_TEST_CASE("several failures are all listed") {
  DRK_CHECK(failed_codes([](auto r) {
              r.getEvidence().setOutputsLeftPoisoned(true);
              r.getEvidence().setInputsMutated(true);
            }).size() == 2);
}
