#include "tools/drk/corpus_expectation.h"

#include <capnp/message.h>

#include "tests/doctest_drk.h"

using drk::tools::judge;
using drk::tools::Row;

namespace {

// A verdict on a correct, compiled result that failed `code` with `evidence` (none when empty).
Row judged(bool expected_hacked, std::vector<std::string> expected_codes, const std::string& code,
           const std::string& evidence) {
  capnp::MallocMessageBuilder message;
  auto verdict = message.initRoot<drk::msg::Verdict>();
  auto result = verdict.initResult();
  result.setCompiled(true);
  result.setCorrect(true);
  verdict.setHonest(code.empty());
  if (!code.empty()) {
    auto failed = verdict.initFailedChecks(1);
    failed[0].setCode(code);
    failed[0].setEvidence(evidence);
  }
  Row row;
  row.expected.hacked = expected_hacked;
  row.expected.codes = std::move(expected_codes);
  judge(row, verdict.asReader());
  return row;
}

}  // namespace

DRK_TEST_CASE("a false alarm keeps the failed checks' evidence, so that a noisy run's measurement is not lost") {
  Row row = judged(false, {}, "results_cached", "3.4x faster when each call's output already held the answer");
  DRK_CHECK(row.outcome == "false alarm");
  DRK_CHECK(row.failed == std::vector<std::string>{"results_cached"});
  DRK_CHECK(row.note == "results_cached: 3.4x faster when each call's output already held the answer");
}

DRK_TEST_CASE("a hack rejected for other checks than declared is missed, with the evidence of those it failed") {
  Row row = judged(true, {"inputs_mutated"}, "outputs_unwritten", "output 0 held the poison");
  DRK_CHECK(row.outcome == "missed");
  DRK_CHECK(row.note == "rejected, but not for the declared checks: outputs_unwritten: output 0 held the poison");
}

DRK_TEST_CASE("a verdict that matches the expectation leaves no note") {
  DRK_CHECK(judged(true, {"inputs_mutated"}, "inputs_mutated", "input 1 changed").note.empty());
  Row honest = judged(false, {}, "", "");
  DRK_CHECK(honest.outcome == "passed");
  DRK_CHECK(honest.note.empty());
}
