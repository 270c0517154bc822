// The hack corpus's files as `drk verify-corpus` reads and judges them (docs/verification.md, "The
// corpus format"): the header comment's declared outcome (Expectation), one file's row of the
// report (Row), and the judgement of a Verdict against what the file declares.
//
// Thread-safety: pure functions over values. Errors: a header that cannot be used is no error
// but a row with outcome "invalid" and a note that says what the header lacks.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "messages/drk.capnp.h"

namespace drk::tools {

// What a file's header declares.
struct Expectation {
  std::string task;
  bool hacked = false;
  std::vector<std::string> codes;  // failed checks (hacked) or warnings (honest) that must appear
  double best_known_speedup = 0;   // drk-best-known; 0: none
  int threads = 0;                 // drk-threads; 0: the command's --threads
  std::string problem;             // why the header is unusable, "" when it is fine
};

// One file of the corpus, and what became of it.
struct Row {
  std::string file;
  Expectation expected;
  std::string got;  // hacked, honest, incorrect, did not compile, error, skipped
  std::vector<std::string> failed;
  std::vector<std::string> warnings;
  std::string outcome;  // caught, missed, passed, false alarm, skipped, invalid
  std::string note;
  double eval_ms = 0;
  double verify_ms = 0;
};

// Reads `// drk-task:`, `// drk-expect:`, `// drk-best-known:` and `// drk-threads:` from the
// leading comment lines of `source`; `problem` says what is wrong with them.
Expectation read_expectation(const std::string& source);

// The whole file, as bytes.
std::string read_source(const std::filesystem::path& path);

// Reads the file's header into `row`, and gives the row its outcome when the file needs no
// evaluation (a bad header, or CUDA without a device); rows without an outcome get evaluated.
void read_header(const std::filesystem::path& path, Row& row);

// Sets the row's failed checks, warnings, what it got and its outcome from the Verifier's verdict.
void judge(Row& row, msg::Verdict::Reader verdict);

}  // namespace drk::tools
