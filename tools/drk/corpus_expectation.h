// The hack corpus's files as `drk verify-corpus` reads and judges them (docs/verification.md, "The
// corpus format"): one file's row of the report (Row) with its header's declared outcome
// (corpus_header.h), and the judgement of a Verdict against what the file declares.
//
// Thread-safety: pure functions over values. Errors: a header that cannot be used is no error
// but a row with outcome "invalid" and a note that says what the header lacks.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "messages/drk.capnp.h"
#include "tools/drk/corpus_header.h"

namespace drk::tools {

// One file of the corpus, and what became of it.
struct Row {
  std::string file;
  std::string kind;  // how it is judged: cpp, cuda, python static (its source alone), python runtime
  Expectation expected;
  std::string got;  // hacked, honest, incorrect, did not compile, error, skipped
  std::vector<std::string> failed;
  std::vector<std::string> warnings;
  std::string outcome;  // caught, missed, passed, false alarm, skipped, invalid
  std::string note;
  double eval_ms = 0;
  double verify_ms = 0;
};

// Reads the file's header into `row`, and gives the row its outcome when the file needs no
// evaluation (a bad header, CUDA without a device, a Python file the static checks judge alone, a
// Python runtime hack whose backend cannot run here); rows without an outcome get evaluated.
void read_header(const std::filesystem::path& path, Row& row);

// Why a Python candidate of `backend` cannot be evaluated here; "" when it can (plain PyTorch and
// load_inline C++ anywhere, load_inline CUDA where a GPU is).
std::string python_runtime_unavailable(judging::Backend backend);

// Sets the row's failed checks, warnings, what it got and its outcome from the Verifier's verdict.
// A verdict that differs from the expectation leaves the failed checks' evidence in the row's note.
void judge(Row& row, msg::Verdict::Reader verdict);

// Judges a Python file by the Verifier's verdict on its source alone (the static checks): a hacked
// file is caught when every declared code fails, an honest one passes when none fails and every
// declared python_* warning is reported (the others need an evaluation). `note` says why the file
// was not evaluated ("" for a static hack, which needs no evaluation).
void judge_source(Row& row, const std::string& source, const std::string& note);

}  // namespace drk::tools
