// promtool_check(): Prometheus's own parser and linter, `promtool check metrics` (Debian's package
// `prometheus`; tools/scripts/install-deps.sh --tests installs it), run on a text in the
// exposition format. A test skips its check, saying so, when promtool is not installed.
//
// Thread-safety: one thread (it runs a program and waits for it).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

#include "tests/support/ran_program.h"
#include "tests/support/run_dir.h"

namespace drk::testing {

inline constexpr const char* kPromtoolMissing =
    "promtool is not installed: the Prometheus format check is skipped (install Debian's package "
    "`prometheus`: tools/scripts/install-deps.sh --tests)";

// The path of promtool found on $PATH, or none.
inline std::optional<std::string> promtool_path() {
  const char* path = std::getenv("PATH");
  std::stringstream folders(path ? path : "/usr/bin");
  for (std::string folder; std::getline(folders, folder, ':');) {
    const std::string candidate = folder + "/promtool";
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

// What `promtool check metrics` said of `text` (exit code 0: valid, no lint problem); none when
// promtool is not installed.
inline std::optional<Ran> promtool_check(const std::string& text) {
  const auto promtool = promtool_path();
  if (!promtool) return std::nullopt;
  RunDir dir;
  const std::string metrics = dir.write("metrics.txt", text);
  return run_program(dir, "/bin/sh", {"-c", "'" + *promtool + "' check metrics < '" + metrics + "'"});
}

}  // namespace drk::testing
