#include "actors/verifier/verify.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "messages/drk.capnp.h"

namespace drk::verifier {
namespace {

struct Failure {
  const char* code;
  std::string evidence;
};

// The harness times batches from outside the sandbox; a sandbox that reports far less time
// than the harness saw is lying about its clock (or doing work after it answered).
constexpr double kMaxWallCheckRatio = 3.0;

std::vector<Failure> failed_checks(msg::EvalResult::Reader result) {
  std::vector<Failure> failures;
  const auto evidence = result.getEvidence();
  switch (result.getSandbox()) {
    case msg::SandboxOutcome::CRASHED:
      failures.push_back({"sandbox_crashed",
                          evidence.getSandboxSignal() != 0
                              ? "the sandbox was killed by signal " +
                                    std::to_string(evidence.getSandboxSignal())
                              : "the sandbox exited with code " +
                                    std::to_string(evidence.getSandboxExitCode())});
      break;
    case msg::SandboxOutcome::TIMED_OUT:
      failures.push_back({"sandbox_timeout", "the candidate missed its deadline and was killed"});
      break;
    case msg::SandboxOutcome::FAILED_TO_LOAD:
      failures.push_back({"failed_to_load", std::string(result.getErrorText().cStr())});
      break;
    case msg::SandboxOutcome::RETURNED_ERROR:
      failures.push_back({"candidate_error", "drk_kernel returned status " +
                                                 std::to_string(evidence.getCandidateStatus())});
      break;
    case msg::SandboxOutcome::OK:
      break;
  }
  if (evidence.getOutputsLeftPoisoned()) {
    failures.push_back({"outputs_unwritten",
                        "an output still held the NaN poison after the call: every element "
                        "must be written"});
  }
  if (evidence.getInputsMutated()) {
    failures.push_back({"inputs_mutated", "an input differed from its pristine copy after the "
                                          "call: inputs are read-only"});
  }
  if (evidence.getWallCheckRatio() > kMaxWallCheckRatio) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "the harness measured %.2fx the time the sandbox reported for the same calls",
                  evidence.getWallCheckRatio());
    failures.push_back({"timer_mismatch", text});
  }
  return failures;
}

}  // namespace

void verify(msg::EvalResult::Reader result, msg::Verdict::Builder out) {
  out.setResult(result);
  const auto failures = failed_checks(result);
  out.setHonest(failures.empty());
  auto list = out.initFailedChecks(static_cast<unsigned>(failures.size()));
  for (unsigned i = 0; i < failures.size(); ++i) {
    list[i].setCode(failures[i].code);
    list[i].setEvidence(failures[i].evidence);
  }
}

}  // namespace drk::verifier
