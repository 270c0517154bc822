// The drkernel source tree the benchmarks read their candidates from: $DRK_SOURCE_DIR when set,
// else the tree the build was configured from.
//
// Thread-safety: free functions. Errors: read_source_file() returns nullopt for a file it cannot
// read; the caller names it with the fix (set DRK_SOURCE_DIR).
#pragma once

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#ifndef DRK_SOURCE_DIR
#error "DRK_SOURCE_DIR must be defined by the build (tools/bench/CMakeLists.txt)"
#endif

namespace drk::bench {

inline std::string source_dir() {
  if (const char* dir = std::getenv("DRK_SOURCE_DIR"); dir && *dir) return dir;
  return DRK_SOURCE_DIR;
}

// The text of RELATIVE below the source tree.
inline std::optional<std::string> read_source_file(const std::string& relative) {
  std::ifstream in(source_dir() + "/" + relative, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace drk::bench
