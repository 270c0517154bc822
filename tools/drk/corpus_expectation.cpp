#include "tools/drk/corpus_expectation.h"

#include <algorithm>

#include "actors/evaluator/sandbox_process.h"

namespace drk::tools {
namespace {

namespace fs = std::filesystem;

bool contains_all(const std::vector<std::string>& have, const std::vector<std::string>& want) {
  for (const auto& code : want)
    if (std::find(have.begin(), have.end(), code) == have.end()) return false;
  return true;
}

}  // namespace

void read_header(const fs::path& path, Row& row) {
  row.expected = read_expectation(read_source(path), language_of(path));
  if (!row.expected.problem.empty()) {
    row.got = "error";
    row.outcome = "invalid";
    row.note = row.expected.problem;
    return;
  }
  // Without the driver no CUDA device can be used: skip before spending nvcc's time.
  if (path.extension() == ".cu" && !evaluator::nvidia_driver_present()) {
    row.got = row.outcome = "skipped";
    row.note = "no CUDA device (/dev/nvidiactl is absent): the GPU script runs this file";
    return;
  }
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
    bool caught = row.got == "hacked" && contains_all(row.failed, row.expected.codes);
    row.outcome = caught ? "caught" : "missed";
    if (!caught && row.got == "hacked") row.note = "rejected, but not for the declared checks";
  } else {
    bool passed = row.got == "honest" && contains_all(row.warnings, row.expected.codes);
    row.outcome = passed ? "passed" : "false alarm";
    if (!passed && row.got == "honest") row.note = "honest, but a declared warning was not reported";
  }
}

}  // namespace drk::tools
