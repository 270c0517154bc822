#include "base/staged_file.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <utility>

namespace drk {

Result<StagedFile> StagedFile::write(FileSystem& files, std::string path, std::string_view bytes, mode_t mode) {
  // Unique within the process too: threads may replace files of one directory at once.
  static std::atomic<uint64_t> sequence{0};
  std::string temporary = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(sequence.fetch_add(1));
  auto fd = files.create_file(temporary, mode);
  if (!fd) return fd.error();
  StagedFile staged(files, std::move(path), std::move(temporary));
  if (auto status = files.write(fd->get(), bytes, staged.temporary_); !status) return status.error();
  if (auto status = files.sync(fd->get(), staged.temporary_); !status) return status.error();
  return staged;
}

StagedFile::StagedFile(FileSystem& files, std::string path, std::string temporary)
    : files_(&files), path_(std::move(path)), temporary_(std::move(temporary)) {}

StagedFile::StagedFile(StagedFile&& other) noexcept
    : files_(other.files_), path_(std::move(other.path_)), temporary_(std::exchange(other.temporary_, {})) {}

StagedFile& StagedFile::operator=(StagedFile&& other) noexcept {
  if (this != &other) {
    remove_temporary();
    files_ = other.files_;
    path_ = std::move(other.path_);
    temporary_ = std::exchange(other.temporary_, {});
  }
  return *this;
}

StagedFile::~StagedFile() { remove_temporary(); }

void StagedFile::remove_temporary() {
  if (!temporary_.empty()) (void)files_->remove(std::exchange(temporary_, {}));
}

Status StagedFile::install(Install how) {
  if (how == Install::replace) {
    Status renamed = files_->rename(temporary_, path_);
    if (renamed) temporary_.clear();
    remove_temporary();
    return renamed;
  }
  Status linked = files_->link(temporary_, path_);
  remove_temporary();  // once linked, the file lives on under `path_`
  return linked;
}

}  // namespace drk
