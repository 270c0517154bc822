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
  std::stringstream lines(output);
  std::string line;
  bool in_error = false, excerpt_done = false;
  size_t excerpt_lines = 0;
  while (std::getline(lines, line)) {
    if (line.rfind(kPrefix, 0) != 0) continue;
    std::string text = line.substr(std::string(kPrefix).size());
    const auto first = text.find_first_not_of(' ');
    text = first == std::string::npos ? "" : text.substr(first);
    if (text.rfind("ERROR SUMMARY:", 0) == 0) {
      report.finished = true;
      report.errors = std::atoi(text.c_str() + std::string("ERROR SUMMARY:").size());
      continue;
    }
    if (text.empty() || text.rfind("COMPUTE-SANITIZER", 0) == 0) {
      if (in_error) excerpt_done = true;
      in_error = false;
      continue;
    }
    // An error starts unindented ("Invalid __global__ read ...", "Program hit ..."); its details
    // are indented after the prefix.
    const bool starts_error = first == 1;
    if (starts_error && !report.excerpt.empty()) excerpt_done = true;
    if (starts_error) in_error = true;
    if (!in_error || excerpt_done || excerpt_lines >= kMaxExcerptLines) continue;
    if (text.rfind("Host Frame", 0) == 0 || text.rfind("Saved host backtrace", 0) == 0) continue;
    report.excerpt += (report.excerpt.empty() ? "" : " | ") + text;
    ++excerpt_lines;
  }
  return report;
}

}  // namespace drk::evaluator
