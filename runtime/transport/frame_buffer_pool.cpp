#include "runtime/transport/frame_buffer_pool.h"

#include <algorithm>
#include <bit>
#include <iterator>
#include <new>

namespace drk::runtime {

FrameBufferPool::~FrameBufferPool() {
  for (Header* header : free_) destroy(header);
}

FrameBufferPool::Buffer FrameBufferPool::take(std::size_t min_bytes) {
  Header* header = nullptr;
  {
    std::lock_guard lock(mutex_);
    // The most recently returned first: its bytes are the likeliest to be in a cache still.
    for (auto kept = free_.rbegin(); kept != free_.rend(); ++kept) {
      if ((*kept)->capacity < min_bytes) continue;
      header = *kept;
      kept_bytes_ -= header->capacity;
      free_.erase(std::next(kept).base());
      break;
    }
  }
  if (header == nullptr) {
    const std::size_t capacity = std::bit_ceil(std::max(min_bytes, kMinBufferBytes));
    header = new (::operator new(sizeof(Header) + capacity)) Header{};
    header->capacity = capacity;
  }
  header->pool = shared_from_this();
  return Buffer{reinterpret_cast<std::byte*>(header + 1), header->capacity};
}

void FrameBufferPool::give_back(void* /*data*/, void* hint) {
  auto* header = static_cast<Header*>(hint);
  const std::shared_ptr<FrameBufferPool> pool = std::move(header->pool);
  if (header->capacity <= kMaxKeptBufferBytes) {
    std::lock_guard lock(pool->mutex_);
    if (pool->free_.size() < kKeptBuffers && pool->kept_bytes_ + header->capacity <= kKeptBytes) {
      pool->free_.push_back(header);
      pool->kept_bytes_ += header->capacity;
      return;
    }
  }
  destroy(header);
}

void* FrameBufferPool::hint_of(std::byte* data) { return reinterpret_cast<Header*>(data) - 1; }

void FrameBufferPool::destroy(Header* header) {
  header->~Header();
  ::operator delete(header);
}

}  // namespace drk::runtime
