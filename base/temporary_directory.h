// TemporaryDirectory: a directory made for one use (mkdtemp: a fresh name, mode 0700), removed
// with everything in it when its owner goes (RAII), whichever way the owner's work ended.
//
// Thread-safety: a plain value; one owner thread. Errors: create() returns io_error naming the
// directory it could not make. Removal is best effort: a file that cannot be removed is left.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <utility>

#include "base/result.h"

namespace drk {

class TemporaryDirectory {
 public:
  // `prefix`-XXXXXX under `parent`; an empty parent means the system's (std::filesystem's
  // temp_directory_path: $TMPDIR, else /tmp).
  static Result<TemporaryDirectory> create(std::string_view prefix, const std::filesystem::path& parent = {});

  TemporaryDirectory() = default;  // owns nothing
  ~TemporaryDirectory() { remove(); }
  TemporaryDirectory(TemporaryDirectory&& other) noexcept : path_(std::exchange(other.path_, {})) {}
  TemporaryDirectory& operator=(TemporaryDirectory&& other) noexcept;
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;

  // Empty when it owns nothing.
  const std::string& path() const { return path_; }

 private:
  explicit TemporaryDirectory(std::string path) : path_(std::move(path)) {}
  void remove();

  std::string path_;
};

}  // namespace drk
