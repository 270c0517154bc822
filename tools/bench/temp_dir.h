// temp_dir(): a TemporaryDirectory for one benchmark step, removed with its contents at scope exit.
// Faults: throws std::runtime_error when the directory cannot be created (a benchmark cannot go on
// without it).
#pragma once

#include <stdexcept>
#include <string_view>
#include <utility>

#include "base/temporary_directory.h"

namespace drk::bench {

inline TemporaryDirectory temp_dir(std::string_view prefix) {
  auto dir = TemporaryDirectory::create(prefix);
  if (!dir) throw std::runtime_error(dir.error().describe());
  return std::move(*dir);
}

}  // namespace drk::bench
