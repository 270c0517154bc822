#include "tools/drk/corpus_expectation.h"

#include <capnp/message.h>

#include <algorithm>
#include <chrono>

#include "actors/evaluator/sandbox_process.h"
#include "actors/verifier/verify.h"

namespace drk::tools {
namespace {

namespace fs = std::filesystem;

bool contains_all(const std::vector<std::string>& have, const std::vector<std::string>& want) {
  for (const auto& code : want)
    if (std::find(have.begin(), have.end(), code) == have.end()) return false;
  return true;
}

// "code: evidence; ..." of every failed check.
std::string failed_evidence(msg::Verdict::Reader verdict) {
  std::string text;
  for (auto check : verdict.getFailedChecks()) {
    if (!text.empty()) text += "; ";
    text += std::string(check.getCode().cStr()) + ": " + check.getEvidence().cStr();
  }
  return text;
}

}  // namespace

void read_header(const fs::path& path, Row& row) {
  const std::string source = read_source(path);
  const CandidateLanguage language = language_of(path);
  row.expected = read_expectation(source, language);
  row.kind = language == CandidateLanguage::python ? "python runtime" : path.extension() == ".cu" ? "cuda" : "cpp";
  if (!row.expected.problem.empty()) {
    row.got = "error";
    row.outcome = "invalid";
    row.note = row.expected.problem;
    return;
  }
  if (language == CandidateLanguage::python) {
    if (row.expected.hacked && row.expected.caught_by == CaughtBy::static_checks) return judge_source(row, source, "");
    const std::string unavailable = python_runtime_unavailable(*row.expected.backend);
    if (unavailable.empty()) return;
    if (!row.expected.hacked) return judge_source(row, source, "judged by its source alone: " + unavailable);
    row.got = row.outcome = "skipped";
    row.note = unavailable;
    return;
  }
  // Without the driver no CUDA device can be used: skip before spending nvcc's time.
  if (path.extension() == ".cu" && !evaluator::nvidia_driver_present()) {
    row.got = row.outcome = "skipped";
    row.note = "no CUDA device (/dev/nvidiactl is absent): the GPU script runs this file";
    return;
  }
}

std::string python_runtime_unavailable(judging::Backend backend) {
  switch (backend) {
    case judging::Backend::pytorch:
    case judging::Backend::cpp: return "";
    case judging::Backend::cuda:
    case judging::Backend::triton:
      return evaluator::nvidia_driver_present()
                 ? ""
                 : "no CUDA device (/dev/nvidiactl is absent): the GPU script runs this " +
                       std::string(judging::backend_name(backend)) + " file";
  }
  return "";
}

void judge_source(Row& row, const std::string& source, const std::string& note) {
  capnp::MallocMessageBuilder result_message;
  auto result = result_message.initRoot<msg::EvalResult>();
  auto candidate = result.initCandidate();
  candidate.setLanguage(msg::Language::PYTHON);
  candidate.setPythonBackend(judging::backend_message(*row.expected.backend));
  candidate.setSource(source);
  capnp::MallocMessageBuilder verdict_message;
  auto verdict = verdict_message.initRoot<msg::Verdict>();
  auto started = std::chrono::steady_clock::now();
  verifier::verify(result.asReader(), verdict);
  row.verify_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  row.kind = "python static";
  row.failed.clear();
  row.warnings.clear();
  for (auto check : verdict.getFailedChecks()) row.failed.emplace_back(check.getCode().cStr());
  for (auto check : verdict.getWarnings()) row.warnings.emplace_back(check.getCode().cStr());
  row.got = verdict.getHonest() ? "honest" : "hacked";
  row.note = note;
  if (row.expected.hacked) {
    row.outcome = row.got == "hacked" && contains_all(row.failed, row.expected.codes) ? "caught" : "missed";
    return;
  }
  std::vector<std::string> static_warnings;
  for (const auto& code : row.expected.codes)
    if (code.rfind("python_", 0) == 0) static_warnings.push_back(code);
  row.outcome = row.got == "honest" && contains_all(row.warnings, static_warnings) ? "passed" : "false alarm";
}

void judge(Row& row, msg::Verdict::Reader verdict) {
  auto result = verdict.getResult();
  for (auto check : verdict.getFailedChecks()) row.failed.emplace_back(check.getCode().cStr());
  for (auto check : verdict.getWarnings()) row.warnings.emplace_back(check.getCode().cStr());
  if (!verdict.getHonest()) row.got = "hacked";
  else if (!result.getCompiled()) row.got = "did not compile";
  else if (!result.getCorrect()) row.got = "incorrect";
  else row.got = "honest";
  if (row.got == "incorrect" || row.got == "did not compile") {
    std::string text = row.got == "incorrect" ? result.getErrorText().cStr() : result.getCompileLog().cStr();
    row.note = text.substr(0, 160);
  }
  if (row.expected.hacked) {
    // `incorrect` in place of checks: the hack's answers are wrong on fresh inputs, which the
    // correctness trials reject before any check runs.
    const bool caught_as_incorrect = row.got == "incorrect" && row.expected.codes == std::vector<std::string>{"incorrect"};
    bool caught = caught_as_incorrect || (row.got == "hacked" && contains_all(row.failed, row.expected.codes));
    row.outcome = caught ? "caught" : "missed";
    if (!caught && row.got == "hacked")
      row.note = "rejected, but not for the declared checks: " + failed_evidence(verdict);
  } else {
    bool passed = row.got == "honest" && contains_all(row.warnings, row.expected.codes);
    row.outcome = passed ? "passed" : "false alarm";
    if (!passed && row.got == "honest") row.note = "honest, but a declared warning was not reported";
    // The measurements behind a false alarm: a noisy machine's is otherwise lost with the run.
    if (row.got == "hacked") row.note = failed_evidence(verdict);
  }
}

}  // namespace drk::tools
