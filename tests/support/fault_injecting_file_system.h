// FaultInjectingFileSystem: the real file system (base/file_system.h) with one fault armed:
// from the nth call of the operation it hits on (counted from inject()), every such call fails
// as a failing disk would, until clear(). The bytes that did reach the disk are real files, so a
// test reads back what a failure left behind.
//
//   disk_full     write() writes nothing and fails with ENOSPC
//   write_error   write() writes nothing and fails with EIO
//   torn_write    write() writes the first half of its bytes, then fails with EIO
//   sync_error    sync() of a file fails with EIO
//   rename_error  rename() or link() (a file put in its place) fails with EIO
//
// Thread-safety: one thread.
#pragma once

#include <cerrno>
#include <string>
#include <string_view>

#include "base/file_system.h"

namespace drk::testing {

enum class FileFault { disk_full, write_error, torn_write, sync_error, rename_error };

inline const char* fault_name(FileFault fault) {
  switch (fault) {
    case FileFault::disk_full: return "disk full";
    case FileFault::write_error: return "EIO on write";
    case FileFault::torn_write: return "torn write";
    case FileFault::sync_error: return "EIO on fsync";
    case FileFault::rename_error: return "failed rename";
  }
  return "?";
}

inline constexpr FileFault kEveryFileFault[] = {FileFault::disk_full, FileFault::write_error, FileFault::torn_write,
                                                FileFault::sync_error, FileFault::rename_error};

class FaultInjectingFileSystem final : public FileSystem {
 public:
  void inject(FileFault fault, int nth = 1) {
    fault_ = fault;
    armed_ = true;
    nth_ = nth;
    calls_ = 0;
  }
  void clear() { armed_ = false; }

  Result<UniqueFd> create_file(const std::string& path, mode_t mode) override { return real_.create_file(path, mode); }
  Status write(int fd, std::string_view bytes, const std::string& path) override {
    if (hits(FileFault::disk_full)) return file_error("write", path, ENOSPC);
    if (hits(FileFault::write_error)) return file_error("write", path, EIO);
    if (hits(FileFault::torn_write)) {
      (void)real_.write(fd, bytes.substr(0, bytes.size() / 2), path);
      return file_error("write", path, EIO);
    }
    return real_.write(fd, bytes, path);
  }
  Status sync(int fd, const std::string& path) override {
    if (hits(FileFault::sync_error)) return file_error("flush (fsync)", path, EIO);
    return real_.sync(fd, path);
  }
  Status sync_directory(const std::string& directory) override { return real_.sync_directory(directory); }
  Status rename(const std::string& from, const std::string& to) override {
    if (hits(FileFault::rename_error)) return file_error("rename '" + from + "' to", to, EIO);
    return real_.rename(from, to);
  }
  Status link(const std::string& from, const std::string& to) override {
    if (hits(FileFault::rename_error)) return file_error("link '" + from + "' to", to, EIO);
    return real_.link(from, to);
  }
  Result<std::string> read_file(const std::string& path) override { return real_.read_file(path); }
  Status create_directories(const std::string& path) override { return real_.create_directories(path); }
  Status create_directory(const std::string& path, mode_t mode) override {
    return real_.create_directory(path, mode);
  }
  Status remove(const std::string& path) override { return real_.remove(path); }
  bool exists(const std::string& path) override { return real_.exists(path); }

 private:
  // Counts a call of the operation that `fault` hits (write() asks for each of its three); true
  // when this one fails.
  bool hits(FileFault fault) {
    if (!armed_ || fault_ != fault) return false;
    return ++calls_ >= nth_;
  }

  FileSystem& real_ = real_file_system();
  FileFault fault_ = FileFault::disk_full;
  bool armed_ = false;
  int nth_ = 1;
  int calls_ = 0;
};

}  // namespace drk::testing
