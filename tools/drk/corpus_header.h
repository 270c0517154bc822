// The header of a hack-corpus file (docs/verification.md, "The corpus format"): the leading
// comment lines that declare the task, the expected verdict and, for Python candidates, the
// backend and which checks must catch the hack.
//
// Thread-safety: pure functions over values. Errors: a header that cannot be used is no error
// but an Expectation whose `problem` says what the header lacks.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "judging/python_static_check.h"

namespace drk::tools {

// The language of a candidate, by its file's extension: C++ and CUDA C++ candidates (`//`
// headers), or KernelBench-format Python ones (`.py`, `#` headers).
enum class CandidateLanguage { cpp, python };

CandidateLanguage language_of(const std::filesystem::path& path);

// Which checks must catch a hacked Python candidate: the static checks alone, or the runtime's.
enum class CaughtBy { unstated, static_checks, runtime };

// What a file's header declares.
struct Expectation {
  std::string task;
  bool hacked = false;
  std::vector<std::string> codes;  // failed checks (hacked) or warnings (honest) that must appear
  double best_known_speedup = 0;   // drk-best-known; 0: none
  int threads = 0;                 // drk-threads; 0: the command's --threads
  std::optional<judging::Backend> backend;  // drk-backend (Python candidates)
  CaughtBy caught_by = CaughtBy::unstated;  // drk-caught-by (hacked Python candidates)
  std::string problem;             // why the header is unusable, "" when it is fine
};

// Reads `drk-task:`, `drk-expect:`, `drk-best-known:`, `drk-threads:`, `drk-backend:` and
// `drk-caught-by:` from the leading comment lines of `source` (`//` lines for C++, `#` lines for
// Python); `problem` says what is wrong with them. A Python candidate must name its backend, and a
// hacked one what catches it.
Expectation read_expectation(const std::string& source, CandidateLanguage language = CandidateLanguage::cpp);

// The whole file, as bytes.
std::string read_source(const std::filesystem::path& path);

}  // namespace drk::tools
