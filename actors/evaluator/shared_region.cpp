#include "actors/evaluator/shared_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

namespace drk::evaluator {

Result<SharedRegion> SharedRegion::create(size_t bytes) {
  SharedRegion region;
  region.fd_.reset(memfd_create("drk-tensors", MFD_CLOEXEC | MFD_ALLOW_SEALING));
  if (!region.fd_) return make_error(Errc::io_error, std::string("memfd_create failed: ") + std::strerror(errno));
  // A sandbox holds the descriptor: shrinking the file under this process's mapping would end
  // it with SIGBUS at its next touch of the lost pages. Growing stays possible (reserve()).
  if (fcntl(region.fd_.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) != 0)
    return make_error(Errc::io_error, std::string("cannot seal the shared region against shrinking: ") +
                                          std::strerror(errno));
  if (auto s = region.reserve(bytes); !s) return s.error();
  return region;
}

SharedRegion::SharedRegion(SharedRegion&& other) noexcept
    : fd_(std::move(other.fd_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SharedRegion& SharedRegion::operator=(SharedRegion&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::move(other.fd_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

SharedRegion::~SharedRegion() { release(); }

void SharedRegion::release() {
  if (data_) munmap(data_, size_);
  fd_.reset();
  data_ = nullptr;
  size_ = 0;
}

Status SharedRegion::reserve(size_t bytes) {
  constexpr size_t kGranule = 2u << 20;
  size_t wanted = (std::max<size_t>(bytes, 1) + kGranule - 1) / kGranule * kGranule;
  if (wanted <= size_) return {};
  if (data_) munmap(data_, size_);
  data_ = nullptr;
  size_ = 0;
  if (ftruncate(fd_.get(), static_cast<off_t>(wanted)) != 0)
    return make_error(Errc::io_error, "cannot size the shared tensor region to " + std::to_string(wanted) +
                                          " bytes: " + std::strerror(errno));
  void* mapped = mmap(nullptr, wanted, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
  if (mapped == MAP_FAILED)
    return make_error(Errc::io_error, std::string("cannot map the shared tensor region: ") + std::strerror(errno));
  data_ = static_cast<uint8_t*>(mapped);
  size_ = wanted;
  return {};
}

}  // namespace drk::evaluator
