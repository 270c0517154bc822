#include "actors/evaluator/compute_sanitizer.h"

#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <vector>

namespace drk::evaluator {
namespace {

constexpr size_t kMaxExcerptLines = 6;
constexpr const char* kPrefix = "=========";

bool executable(const std::string& path) { return !path.empty() && access(path.c_str(), X_OK) == 0; }

// The errors of a sanitizer run, each as its lines without the "=========" prefix and without its
// host backtrace; the summary's count.
struct SanitizerOutput {
  bool finished = false;
  int summary_errors = 0;
  std::vector<std::vector<std::string>> errors;
};

SanitizerOutput split_sanitizer_output(const std::string& output) {
  SanitizerOutput parsed;
  std::stringstream lines(output);
  std::string line;
  bool in_error = false, in_backtrace = false;
  while (std::getline(lines, line)) {
    if (line.rfind(kPrefix, 0) != 0) continue;
    std::string text = line.substr(std::string(kPrefix).size());
    const auto first = text.find_first_not_of(' ');
    text = first == std::string::npos ? "" : text.substr(first);
    if (text.rfind("ERROR SUMMARY:", 0) == 0) {
      parsed.finished = true;
      parsed.summary_errors = std::atoi(text.c_str() + std::string("ERROR SUMMARY:").size());
      in_error = false;
      continue;
    }
    if (text.empty() || text.rfind("COMPUTE-SANITIZER", 0) == 0) {
      in_error = false;
      continue;
    }
    // An error starts unindented ("Invalid __global__ read ...", "Uninitialized __global__ memory
    // read ...", "Program hit ..."); its details are indented after the prefix, the host backtrace
    // last ("Saved host backtrace ...", then "Host Frame:" lines and their "in <library>" lines).
    if (first == 1) {
      parsed.errors.push_back({text});
      in_error = true;
      in_backtrace = false;
      continue;
    }
    if (!in_error) continue;
    if (text.rfind("Saved host backtrace", 0) == 0 || text.rfind("Host Frame", 0) == 0) in_backtrace = true;
    if (!in_backtrace) parsed.errors.back().push_back(text);
  }
  return parsed;
}

// An error's first lines, " | "-joined.
std::string excerpt(const std::vector<std::string>& error) {
  std::string text;
  for (size_t i = 0; i < error.size() && i < kMaxExcerptLines; ++i) text += (i ? " | " : "") + error[i];
  return text;
}

}  // namespace

Result<std::string> find_compute_sanitizer() {
  if (const char* path = std::getenv("DRK_COMPUTE_SANITIZER"); path && *path) {
    if (executable(path)) return std::string(path);
    return make_error(Errc::not_found, std::string("DRK_COMPUTE_SANITIZER='") + path + "' is not an executable");
  }
  std::vector<std::string> candidates = {"/usr/local/cuda/bin/compute-sanitizer",
                                         "/usr/local/cuda/compute-sanitizer/compute-sanitizer"};
  if (const char* path = std::getenv("PATH")) {
    std::stringstream folders(path);
    std::string folder;
    while (std::getline(folders, folder, ':'))
      if (!folder.empty()) candidates.push_back(folder + "/compute-sanitizer");
  }
  for (const auto& candidate : candidates)
    if (executable(candidate)) return candidate;
  return make_error(Errc::not_found,
                    "compute-sanitizer is not installed (looked in /usr/local/cuda and on PATH): install the CUDA "
                    "toolkit's, or set DRK_COMPUTE_SANITIZER to its path");
}

MemcheckReport parse_memcheck_output(const std::string& output) {
  MemcheckReport report;
  const SanitizerOutput parsed = split_sanitizer_output(output);
  report.finished = parsed.finished;
  report.errors = parsed.summary_errors;
  if (!parsed.errors.empty()) report.excerpt = excerpt(parsed.errors.front());
  return report;
}

InitcheckReport parse_initcheck_output(const std::string& output) {
  InitcheckReport report;
  const SanitizerOutput parsed = split_sanitizer_output(output);
  report.finished = parsed.finished;
  report.errors = parsed.summary_errors;
  for (const auto& error : parsed.errors) {
    if (error.front().rfind("Uninitialized __global__ memory read", 0) != 0) continue;
    if (report.device_reads++ == 0) report.excerpt = excerpt(error);
  }
  return report;
}

}  // namespace drk::evaluator
