// SharedRegion: the memory that the Evaluator and its sandbox share for tensors (a memfd mapped
// MAP_SHARED by both). The Evaluator owns it across sandbox restarts; a sandbox inherits its
// descriptor and maps it again whenever the size in a request changes.
//
// Thread-safety: not thread-safe; owned by one EvaluationEngine.
// Ownership: move-only RAII; the destructor unmaps and closes.
// Errors: io_error when the kernel refuses memfd_create, ftruncate or mmap.
#pragma once

#include <cstddef>
#include <cstdint>

#include "base/result.h"
#include "base/unique_fd.h"
#include "base/result.h"

namespace drk::evaluator {

class SharedRegion {
 public:
  static Result<SharedRegion> create(size_t bytes);
  SharedRegion(SharedRegion&& other) noexcept;
  SharedRegion& operator=(SharedRegion&& other) noexcept;
  SharedRegion(const SharedRegion&) = delete;
  SharedRegion& operator=(const SharedRegion&) = delete;
  ~SharedRegion();

  // Grows the region to at least `bytes` (rounded up to 2 MiB); contents are not kept.
  Status reserve(size_t bytes);

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  int fd() const { return fd_.get(); }

 private:
  SharedRegion() = default;
  void release();

  UniqueFd fd_;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace drk::evaluator
