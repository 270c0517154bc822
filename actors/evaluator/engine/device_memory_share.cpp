#include "actors/evaluator/engine/device_memory_share.h"

#include <utility>

namespace drk::evaluator {

DeviceMemoryShare::DeviceMemoryShare(std::function<size_t()> measure_capacity)
    : measure_capacity_(std::move(measure_capacity)) {}

DeviceMemoryShare::Claim DeviceMemoryShare::claim(size_t bytes) {
  std::unique_lock lock(mutex_);
  if (!capacity_) capacity_ = static_cast<size_t>(static_cast<double>(measure_capacity_()) * (1 - kMarginShare));
  const uint64_t ticket = next_ticket_++;
  changed_.wait(lock, [&] { return ticket == serving_ && (held_ == 0 || claimed_ + bytes <= *capacity_); });
  ++serving_;
  claimed_ += bytes;
  ++held_;
  // The next in line may fit beside this one.
  changed_.notify_all();
  return Claim(this, bytes);
}

void DeviceMemoryShare::give_back(size_t bytes) {
  {
    std::lock_guard lock(mutex_);
    claimed_ -= bytes;
    --held_;
  }
  changed_.notify_all();
}

size_t DeviceMemoryShare::capacity() const {
  std::lock_guard lock(mutex_);
  return capacity_.value_or(0);
}

size_t DeviceMemoryShare::claimed() const {
  std::lock_guard lock(mutex_);
  return claimed_;
}

size_t DeviceMemoryShare::waiting() const {
  std::lock_guard lock(mutex_);
  return next_ticket_ - serving_;
}

DeviceMemoryShare::Claim::Claim(Claim&& other) noexcept
    : share_(std::exchange(other.share_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceMemoryShare::Claim& DeviceMemoryShare::Claim::operator=(Claim&& other) noexcept {
  if (this != &other) {
    release();
    share_ = std::exchange(other.share_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

DeviceMemoryShare::Claim::~Claim() { release(); }

void DeviceMemoryShare::Claim::release() {
  if (share_) share_->give_back(bytes_);
  share_ = nullptr;
  bytes_ = 0;
}

}  // namespace drk::evaluator
