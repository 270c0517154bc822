// FrameBuilder: the Cap'n Proto MessageBuilder an Outbox builds each envelope in, laid out so
// that the envelope becomes one ZeroMQ frame without copying its large part a second time.
//
// The first segment is a buffer the caller keeps and reuses (zeroed on entry; the builder
// zeroes what it used when it ends, as MallocMessageBuilder does with a supplied segment). An
// envelope that outgrows it (a large Data: policy weights, a kernel's source) gets a second
// segment in a buffer from a FrameBufferPool, with room in front for the segment table and the
// whole first segment, and slack behind for the fields written after the large one (the Outbox
// sets sender and recipient after its caller's fill). take_frame() then writes the table and
// copies the first segment (at most its capacity, 8 KiB in an Outbox) in front of the second
// segment's words, which makes the wire form contiguous in that buffer, and hands the buffer to
// ZeroMQ, which gives it back to the pool when the frame is done (on whichever thread releases
// it). So a 64 KiB payload is copied once, into the builder; flattening it into a fresh frame
// would copy it again.
// Any other layout is encoded into a frame of its own, in one copy: a message in one segment
// into a fresh frame (at most the first segment's size); a larger one, such as an envelope whose
// payload is borrowed (borrowed_data.h: its segments are the first and the caller's bytes) or
// one in three or more segments (fields grown after the slack ran out), into a pool buffer that
// ZeroMQ takes without a copy.
//
// The frame's bytes are exactly what codec.h's encode() would produce for the message (segment
// table, then the segments), so receivers cannot tell the difference. An envelope whose payload
// is borrowed can instead go out in two parts (take_parts), so that a payload an actor received
// is answered or passed on without being copied.
//
// Thread-safety: one thread builds; the frame, once taken, belongs to ZeroMQ.
// Errors: allocation failure throws std::bad_alloc (a fault).
#pragma once

#include <capnp/message.h>
#include <kj/array.h>
#include <kj/vector.h>

#include <zmq.hpp>

#include "runtime/transport/frame_buffer_pool.h"

namespace drk::runtime {

class FrameBuilder final : public capnp::MessageBuilder {
 public:
  // Words of slack behind a second segment's first object, for what is written after it.
  static constexpr unsigned kSlackWords = 256;

  // `first_segment` must be zeroed and, like `pool` (which gives the second segment), outlive
  // the builder.
  FrameBuilder(kj::ArrayPtr<capnp::word> first_segment, FrameBufferPool& pool);
  ~FrameBuilder() noexcept(false) override;
  FrameBuilder(const FrameBuilder&) = delete;
  FrameBuilder& operator=(const FrameBuilder&) = delete;

  kj::ArrayPtr<capnp::word> allocateSegment(unsigned minimum_size) override;

  // The message as one frame (see above). Call once, when the message is complete; the
  // builder may not be written afterwards.
  zmq::message_t take_frame();

  // Whether the message is two segments whose second is bytes the builder does not own: a
  // borrowed payload (borrowed_data.h). Such a message goes out in two parts (codec.h).
  bool has_borrowed_tail();
  // Instead of take_frame(), when has_borrowed_tail(): `head` gets the segment table and the
  // first segment (a copy), `tail` the borrowed bytes: a share of `received` (ZeroMQ counts
  // references, nothing is copied) when they are exactly that message's bytes, else a copy in a
  // buffer of the pool.
  void take_parts(zmq::message_t& head, zmq::message_t& tail, zmq::message_t* received);

 private:
  // The buffer of the second segment: headroom words, then the segment.
  struct SecondSegment {
    std::byte* buffer = nullptr;  // from pool_; null once taken by a frame
    std::size_t headroom_words = 0;
    capnp::word* words() const { return reinterpret_cast<capnp::word*>(buffer) + headroom_words; }
  };

  kj::ArrayPtr<capnp::word> first_segment_;
  FrameBufferPool& pool_;
  bool first_returned_ = false;
  SecondSegment second_;
  kj::Vector<void*> more_segments_;  // the third and later, calloc'd
  std::size_t next_size_words_;      // MallocMessageBuilder's growth heuristic for the later ones
};

}  // namespace drk::runtime
