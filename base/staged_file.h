// StagedFile: a file written in full and flushed (fsync) beside its place, not yet in it: the
// first half of write_file_atomically() (base/file_system.h), for a caller that puts several
// files in place only once every one of them is written, so that a full disk or an EIO while
// writing the last leaves the others' old versions in place too.
//
// install() puts it in place: over what is there (Install::replace, rename(2)), or only where
// nothing is (Install::only_new, link(2): invalid_argument when `path` exists, which is kept).
// The directory is not flushed: the caller flushes it once, after its last install
// (FileSystem::sync_directory). A StagedFile that was not installed removes its temporary when it
// goes (RAII): a failure leaves nothing behind.
//
// Thread-safety: one thread per object; objects for files of one directory may be used by
// different threads (the temporaries' names are unique within the process).
// Ownership: borrows `files`, which must outlive it. Errors: io_error naming the file (the
// temporary is `path` followed by `.tmp.PID.N`) and the operating system's reason.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/file_system.h"
#include "base/result.h"

namespace drk {

class StagedFile {
 public:
  enum class Install { replace, only_new };

  // `bytes` in a new temporary beside `path` with `mode` less the umask, flushed.
  static Result<StagedFile> write(FileSystem& files, std::string path, std::string_view bytes, mode_t mode = 0666);

  StagedFile(StagedFile&& other) noexcept;
  StagedFile& operator=(StagedFile&& other) noexcept;
  StagedFile(const StagedFile&) = delete;
  StagedFile& operator=(const StagedFile&) = delete;
  ~StagedFile();

  // Once only: afterwards nothing is staged, whether it succeeded or not.
  Status install(Install how);
  const std::string& path() const { return path_; }

 private:
  StagedFile(FileSystem& files, std::string path, std::string temporary);
  void remove_temporary();

  FileSystem* files_;
  std::string path_;
  std::string temporary_;  // empty once installed or moved from
};

}  // namespace drk
