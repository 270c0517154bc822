#include "base/file_system.h"

#include <fcntl.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "base/staged_file.h"

namespace drk {
namespace {

namespace fs = std::filesystem;

class PosixFileSystem final : public FileSystem {
 public:
  Result<UniqueFd> create_file(const std::string& path, mode_t mode) override {
    UniqueFd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
    if (!fd) return file_error("create", path, errno);
    return fd;
  }

  Status write(int fd, std::string_view bytes, const std::string& path) override {
    while (!bytes.empty()) {
      const ssize_t put = ::write(fd, bytes.data(), bytes.size());
      if (put < 0 && errno == EINTR) continue;
      if (put < 0) return file_error("write", path, errno);
      bytes.remove_prefix(static_cast<size_t>(put));
    }
    return {};
  }

  Status sync(int fd, const std::string& path) override {
    if (::fsync(fd) != 0) return file_error("flush (fsync)", path, errno);
    return {};
  }

  Status sync_directory(const std::string& directory) override {
    const UniqueFd fd(::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd) return file_error("open the directory", directory, errno);
    return sync(fd.get(), directory);
  }

  Status rename(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return file_error("rename '" + from + "' to", to, errno);
    return {};
  }

  Status link(const std::string& from, const std::string& to) override {
    if (::link(from.c_str(), to.c_str()) == 0) return {};
    const int error = errno;
    Error failed = file_error("link '" + from + "' to", to, error);
    if (error == EEXIST) failed.code = Errc::invalid_argument;
    return failed;
  }

  Result<std::string> read_file(const std::string& path) override {
    const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
      const int error = errno;
      Error failed = file_error("read", path, error);
      if (error == ENOENT) failed.code = Errc::not_found;
      return failed;
    }
    std::string bytes;
    char chunk[1 << 16];
    while (true) {
      const ssize_t got = ::read(fd.get(), chunk, sizeof chunk);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return file_error("read", path, errno);
      if (got == 0) return bytes;
      bytes.append(chunk, static_cast<size_t>(got));
    }
  }

  Status create_directories(const std::string& path) override {
    std::error_code error;
    fs::create_directories(path, error);
    if (error) return file_error("create the directory", path, error.value());
    return {};
  }

  Status create_directory(const std::string& path, mode_t mode) override {
    if (::mkdir(path.c_str(), mode) != 0 && errno != EEXIST) return file_error("create the directory", path, errno);
    return {};
  }

  Status remove(const std::string& path) override {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return file_error("remove", path, errno);
    return {};
  }

  bool exists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }
};

}  // namespace

FileSystem& real_file_system() {
  static PosixFileSystem files;
  return files;
}

Error file_error(std::string_view doing, const std::string& path, int error_number) {
  std::string message = "cannot " + std::string(doing) + " '" + path + "': " + std::strerror(error_number);
  if (error_number == ENOSPC || error_number == EDQUOT) message += " (free space on its disk, then retry)";
  return make_error(Errc::io_error, std::move(message));
}

Status write_file_atomically(FileSystem& files, const std::string& path, std::string_view bytes, mode_t mode) {
  auto staged = StagedFile::write(files, path, bytes, mode);
  if (!staged) return staged.error();
  if (auto installed = staged->install(StagedFile::Install::replace); !installed) return installed;
  const std::string directory = fs::path(path).parent_path().string();
  return files.sync_directory(directory.empty() ? "." : directory);
}

}  // namespace drk
