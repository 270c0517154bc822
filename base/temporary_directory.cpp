#include "base/temporary_directory.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace drk {

namespace fs = std::filesystem;

Result<TemporaryDirectory> TemporaryDirectory::create(std::string_view prefix, const fs::path& parent) {
  std::error_code error;
  const fs::path where = parent.empty() ? fs::temp_directory_path(error) : parent;
  if (error) return make_error(Errc::io_error, "no temporary directory to create '" + std::string(prefix) +
                                                   "-XXXXXX' in: " + error.message() + " (set TMPDIR)");
  std::string pattern = (where / (std::string(prefix) + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data()))
    return make_error(Errc::io_error, "cannot create the directory '" + pattern + "': " + std::strerror(errno) +
                                          " (is its parent writable?)");
  return TemporaryDirectory(std::move(pattern));
}

TemporaryDirectory& TemporaryDirectory::operator=(TemporaryDirectory&& other) noexcept {
  if (this != &other) {
    remove();
    path_ = std::exchange(other.path_, {});
  }
  return *this;
}

void TemporaryDirectory::remove() {
  if (path_.empty()) return;
  std::error_code ignored;
  fs::remove_all(path_, ignored);
  path_.clear();
}

}  // namespace drk
