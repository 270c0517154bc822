// FileSystem: the seam between the project's durable files and the operating system, in the
// manner of LevelDB's Env. The policy checkpoints (kernels/schedule/policy_checkpoint.h), the
// compile cache (kernels/compile/compiler.h), the network map (runtime/nodes/network_map.h), a run
// directory's node files (runtime/nodes/run_network.h) and the CURVE key directory
// (runtime/nodes/curve_keys.h) go through it, so that tests inject a full disk, an EIO on write or
// on fsync, a torn write or a rename that fails (tests/support/fault_injecting_file_system.h)
// without a failing disk.
// The archive is not behind it: SQLite does its own I/O (its VFS) and its own durability (WAL).
//
// write_file_atomically() is how a file is replaced: a temporary file beside `path`, written in
// full, flushed (fsync), renamed over `path`, then the directory flushed. On any failure the
// temporary is removed and `path` keeps what it had: a reader sees the old bytes or the new ones,
// never a part, and nothing committed before is lost. StagedFile (base/staged_file.h) is its two
// halves, for several files put in place together.
//
// Thread-safety: real_file_system() holds no state; any thread may use it. Errors: io_error whose
// message names the file and the operating system's reason (not_found from read_file() for a file
// that is absent); never an exception.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "base/result.h"
#include "base/unique_fd.h"

namespace drk {

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // A new file, open for writing (O_EXCL: never one that exists), `mode` less the umask.
  virtual Result<UniqueFd> create_file(const std::string& path, mode_t mode) = 0;
  // All of `bytes`, or an error; `path` names the file for the message.
  virtual Status write(int fd, std::string_view bytes, const std::string& path) = 0;
  virtual Status sync(int fd, const std::string& path) = 0;
  virtual Status sync_directory(const std::string& directory) = 0;
  virtual Status rename(const std::string& from, const std::string& to) = 0;
  // `to` becomes a second name of `from` (link(2)); invalid_argument when `to` exists.
  virtual Status link(const std::string& from, const std::string& to) = 0;
  virtual Result<std::string> read_file(const std::string& path) = 0;
  virtual Status create_directories(const std::string& path) = 0;
  // One directory, in a parent that exists, with `mode` less the umask; one that exists already
  // is no error and keeps its mode.
  virtual Status create_directory(const std::string& path, mode_t mode) = 0;
  // A file that is absent already is no error.
  virtual Status remove(const std::string& path) = 0;
  virtual bool exists(const std::string& path) = 0;
};

// The POSIX file system.
FileSystem& real_file_system();

// `cannot <doing> '<path>': <reason>`, with the fix when the disk is full.
Error file_error(std::string_view doing, const std::string& path, int error_number);

Status write_file_atomically(FileSystem& files, const std::string& path, std::string_view bytes,
                             mode_t mode = 0666);

}  // namespace drk
