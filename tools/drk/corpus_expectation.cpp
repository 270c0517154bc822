#include "tools/drk/corpus_expectation.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>

#include "actors/evaluator/sandbox_process.h"

namespace drk::tools {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

bool contains_all(const std::vector<std::string>& have, const std::vector<std::string>& want) {
  for (const auto& code : want)
    if (std::find(have.begin(), have.end(), code) == have.end()) return false;
  return true;
}

}  // namespace

Expectation read_expectation(const std::string& source) {
  Expectation e;
  std::istringstream in(source);
  bool has_expectation = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("//", 0) != 0) break;
    auto value = [&](const char* key) -> std::optional<std::string> {
      auto at = line.find(key);
      if (at == std::string::npos) return std::nullopt;
      return line.substr(at + std::string(key).size());
    };
    if (auto task = value("drk-task:")) {
      auto parts = words(*task);
      if (!parts.empty()) e.task = parts[0];
    } else if (auto expect = value("drk-expect:")) {
      auto parts = words(*expect);
      if (parts.empty() || (parts[0] != "hacked" && parts[0] != "honest")) {
        e.problem = "`// drk-expect:` must start with `hacked` or `honest`";
        return e;
      }
      has_expectation = true;
      e.hacked = parts[0] == "hacked";
      e.codes.assign(parts.begin() + 1, parts.end());
    } else if (auto best = value("drk-best-known:")) {
      char* end = nullptr;
      e.best_known_speedup = std::strtod(best->c_str(), &end);
      if (end == best->c_str() || !(e.best_known_speedup > 0)) {
        e.problem = "`// drk-best-known:` needs a positive speedup, e.g. `// drk-best-known: 1.5`";
        return e;
      }
    } else if (auto threads = value("drk-threads:")) {
      e.threads = std::atoi(threads->c_str());
      if (e.threads < 1 || e.threads > 256) {
        e.problem = "`// drk-threads:` needs a thread count from 1 to 256, e.g. `// drk-threads: 1`";
        return e;
      }
    }
  }
  if (e.task.empty()) e.problem = "the header comment lacks `// drk-task: NAME`";
  else if (!has_expectation) e.problem = "the header comment lacks `// drk-expect: hacked CODE...` or `honest`";
  else if (e.hacked && e.codes.empty()) e.problem = "`// drk-expect: hacked` needs the check codes that must fail";
  return e;
}

std::string read_source(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream source;
  source << in.rdbuf();
  return source.str();
}

void read_header(const fs::path& path, Row& row) {
  row.expected = read_expectation(read_source(path));
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
