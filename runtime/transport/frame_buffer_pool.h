// FrameBufferPool: buffers that an Outbox fills and hands to ZeroMQ as frames without a copy,
// and that come back to the pool, to be filled again, when ZeroMQ frees the frame.
//
// Why a pool: ZeroMQ frees a frame on the thread that drops it last (the receiver's, or its I/O
// thread's), and a large buffer malloc'd on one thread and freed on another makes glibc hand its
// pages back to the kernel and fault them in, zeroed, at the next malloc, over and over (page
// faults were the largest cost of a 64 KiB envelope in `perf`). A buffer taken from the pool
// holds the pool alive (a header in front of its bytes) until it comes back.
//
// Sizes: take() rounds up to a power of two of at least kMinBufferBytes and returns the kept
// buffer that came back last among those large enough (its bytes are the likeliest to be in a
// cache still: a sender that took the oldest cycled through the whole pool). At most
// kKeptBuffers buffers and kKeptBytes bytes are kept; buffers beyond that, or over
// kMaxKeptBufferBytes, are freed when they come back, so the pool's memory stays bounded. A buffer's bytes are not zeroed: what they held before is still there.
//
// Thread-safety: take() from the owner's thread; give_back() from any thread. Create with
// std::make_shared (a taken buffer keeps a std::shared_ptr to its pool).
// Errors: take() throws std::bad_alloc when memory runs out (a fault).
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace drk::runtime {

class FrameBufferPool : public std::enable_shared_from_this<FrameBufferPool> {
 public:
  static constexpr std::size_t kMinBufferBytes = 64u << 10;
  static constexpr std::size_t kMaxKeptBufferBytes = 1u << 20;
  static constexpr std::size_t kKeptBuffers = 32;
  static constexpr std::size_t kKeptBytes = 4u << 20;

  struct Buffer {
    std::byte* data;  // 16-byte aligned
    std::size_t capacity;
  };

  FrameBufferPool() = default;
  ~FrameBufferPool();
  FrameBufferPool(const FrameBufferPool&) = delete;
  FrameBufferPool& operator=(const FrameBufferPool&) = delete;

  // A buffer of at least `min_bytes`.
  Buffer take(std::size_t min_bytes);

  // Returns a buffer to its pool. The signature of a ZeroMQ free function: `hint` is
  // hint_of(data), as zmq::message_t(data, size, &give_back, hint_of(data)) passes it.
  static void give_back(void* data, void* hint);
  // Returns a buffer that never became a frame.
  static void give_back(std::byte* data) { give_back(data, hint_of(data)); }
  static void* hint_of(std::byte* data);

 private:
  struct alignas(16) Header {
    std::shared_ptr<FrameBufferPool> pool;  // set while the buffer is out of the pool
    std::size_t capacity = 0;
  };

  static void destroy(Header* header);

  std::mutex mutex_;
  std::vector<Header*> free_;
  std::size_t kept_bytes_ = 0;
};

}  // namespace drk::runtime
