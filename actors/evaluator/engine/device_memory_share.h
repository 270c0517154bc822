// DeviceMemoryShare: the device memory of one GPU, shared by the engines of one process that
// evaluate on it at once (`drk bench kernelbench --jobs N` on cuda). An evaluation claims its
// footprint before it allocates its tensors and holds the claim until its memory is given back,
// so that three evaluations of a 36 GiB problem queue for the device instead of failing with
// "out of memory" where one at a time fits.
//
// Claims are granted in the order they were asked for (a large one is not starved by a stream of
// small ones); one fits when it and the claims held stay within the capacity, and a claim larger
// than the whole capacity is granted when no other is held (it then runs alone, and a real
// shortage fails as it would without a share).
//
// The capacity is measured once, by the first claim (`measure_capacity`: the device's free memory
// then, read on the claiming engine's thread), less kMarginShare for what no claim counts (CUDA
// contexts, the allocator cache of a C ABI candidate's LibTorch reference).
//
// Thread-safety: claim() from any thread; a Claim is released by its destructor, from any thread.
// Errors: none; claim() blocks until granted.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>

namespace drk::evaluator {

class DeviceMemoryShare {
 public:
  static constexpr double kMarginShare = 0.1;

  explicit DeviceMemoryShare(std::function<size_t()> measure_capacity);

  class Claim {
   public:
    Claim() = default;
    Claim(Claim&& other) noexcept;
    Claim& operator=(Claim&& other) noexcept;
    Claim(const Claim&) = delete;
    Claim& operator=(const Claim&) = delete;
    ~Claim();
    size_t bytes() const { return bytes_; }

   private:
    friend class DeviceMemoryShare;
    Claim(DeviceMemoryShare* share, size_t bytes) : share_(share), bytes_(bytes) {}
    void release();
    DeviceMemoryShare* share_ = nullptr;
    size_t bytes_ = 0;
  };

  // Blocks until `bytes` may be used beside the claims held (see above).
  Claim claim(size_t bytes);

  size_t capacity() const;   // 0 until the first claim measured it
  size_t claimed() const;    // the bytes of the claims held
  size_t waiting() const;    // claims asked for and not yet granted

 private:
  void give_back(size_t bytes);

  std::function<size_t()> measure_capacity_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<size_t> capacity_;
  size_t claimed_ = 0, held_ = 0;
  uint64_t next_ticket_ = 0, serving_ = 0;
};

}  // namespace drk::evaluator
