#include "runtime/transport/frame_builder.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>

#include "runtime/transport/codec.h"

namespace drk::runtime {
namespace {

// The segment table of a two-segment message: the count less one, both sizes, padding.
constexpr std::size_t kTwoSegmentTableWords = 2;
static_assert(std::endian::native == std::endian::little, "the segment table is written as host words");

}  // namespace

FrameBuilder::FrameBuilder(kj::ArrayPtr<capnp::word> first_segment, FrameBufferPool& pool)
    : first_segment_(first_segment), pool_(pool), next_size_words_(first_segment.size()) {}

FrameBuilder::~FrameBuilder() noexcept(false) {
  if (first_returned_) {
    const auto segments = getSegmentsForOutput();
    if (segments.size() > 0) std::memset(first_segment_.begin(), 0, segments[0].size() * sizeof(capnp::word));
  }
  if (second_.buffer != nullptr) FrameBufferPool::give_back(second_.buffer);
  for (void* segment : more_segments_) std::free(segment);
}

kj::ArrayPtr<capnp::word> FrameBuilder::allocateSegment(unsigned minimum_size) {
  const bool first = !first_returned_ && second_.buffer == nullptr && more_segments_.empty();
  if (first && minimum_size <= first_segment_.size()) {
    first_returned_ = true;
    return first_segment_;
  }
  if (first_returned_ && second_.buffer == nullptr && more_segments_.empty()) {
    // The second segment, with headroom for the table and the first segment (take_frame).
    const std::size_t words = std::max<std::size_t>(std::size_t{minimum_size} + kSlackWords, next_size_words_);
    const std::size_t headroom = kTwoSegmentTableWords + first_segment_.size();
    second_ = SecondSegment{pool_.take((headroom + words) * sizeof(capnp::word)).data, headroom};
    std::memset(second_.words(), 0, words * sizeof(capnp::word));  // a pool's buffers hold old bytes
    next_size_words_ += words;
    return kj::arrayPtr(second_.words(), words);
  }
  const std::size_t words = std::max<std::size_t>(minimum_size, next_size_words_);
  void* segment = std::calloc(words, sizeof(capnp::word));
  if (segment == nullptr) throw std::bad_alloc();
  more_segments_.add(segment);
  next_size_words_ += words;
  return kj::arrayPtr(static_cast<capnp::word*>(segment), words);
}

zmq::message_t FrameBuilder::take_frame() {
  const auto segments = getSegmentsForOutput();
  if (segments.size() == 2 && second_.buffer != nullptr && segments[1].begin() == second_.words()) {
    const std::size_t first_words = segments[0].size();
    capnp::word* const start = second_.words() - first_words - kTwoSegmentTableWords;
    const uint32_t table[4] = {1, static_cast<uint32_t>(first_words), static_cast<uint32_t>(segments[1].size()),
                               0};
    std::memcpy(start, table, sizeof table);
    std::memcpy(start + kTwoSegmentTableWords, segments[0].begin(), first_words * sizeof(capnp::word));
    const std::size_t bytes = (kTwoSegmentTableWords + first_words + segments[1].size()) * sizeof(capnp::word);
    zmq::message_t frame(start, bytes, &FrameBufferPool::give_back, FrameBufferPool::hint_of(second_.buffer));
    second_.buffer = nullptr;  // the frame owns it now
    return frame;
  }
  const std::size_t bytes = encoded_size_bytes(*this);
  if (bytes <= first_segment_.asBytes().size()) {
    zmq::message_t frame(bytes);
    encode_into(*this, {static_cast<std::byte*>(frame.data()), bytes});
    return frame;
  }
  // Large (a borrowed payload, or three or more segments): into a pool buffer, for the reason
  // the pool exists (frame_buffer_pool.h).
  const FrameBufferPool::Buffer buffer = pool_.take(bytes);
  encode_into(*this, {buffer.data, bytes});
  return zmq::message_t(buffer.data, bytes, &FrameBufferPool::give_back, FrameBufferPool::hint_of(buffer.data));
}

bool FrameBuilder::has_borrowed_tail() {
  return first_returned_ && second_.buffer == nullptr && more_segments_.empty() &&
         getSegmentsForOutput().size() == 2;
}

void FrameBuilder::take_parts(zmq::message_t& head, zmq::message_t& tail, zmq::message_t* received) {
  const auto segments = getSegmentsForOutput();
  const auto first = segments[0].asBytes(), borrowed = segments[1].asBytes();
  const uint32_t table[4] = {1, static_cast<uint32_t>(segments[0].size()), static_cast<uint32_t>(segments[1].size()),
                             0};
  head.rebuild(kTwoSegmentTableWords * sizeof(capnp::word) + first.size());
  std::memcpy(head.data(), table, sizeof table);
  std::memcpy(static_cast<std::byte*>(head.data()) + sizeof table, first.begin(), first.size());
  if (received != nullptr && received->data() == borrowed.begin() && received->size() == borrowed.size()) {
    tail.copy(*received);
  } else {
    // Into a pool buffer, not ZeroMQ's own malloc: the receiver frees the tail on its thread
    // (frame_buffer_pool.h says what that costs).
    const FrameBufferPool::Buffer buffer = pool_.take(borrowed.size());
    std::memcpy(buffer.data, borrowed.begin(), borrowed.size());
    tail.rebuild(buffer.data, borrowed.size(), &FrameBufferPool::give_back, FrameBufferPool::hint_of(buffer.data));
  }
}

}  // namespace drk::runtime
