#include "runtime/transport/frame_builder.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "messages/drk.capnp.h"
#include "runtime/payload.h"
#include "runtime/transport/borrowed_data.h"
#include "runtime/transport/codec.h"
#include "tests/doctest_drk.h"

namespace drk::runtime {
namespace {

constexpr std::size_t kFirstSegmentWords = 64;

kj::Array<capnp::word> zeroed_segment() {
  auto segment = kj::heapArray<capnp::word>(kFirstSegmentWords);
  std::memset(segment.begin(), 0, segment.asBytes().size());
  return segment;
}

bool all_zero(kj::ArrayPtr<const capnp::word> words) {
  const auto bytes = words.asBytes();
  return std::all_of(bytes.begin(), bytes.end(), [](kj::byte byte) { return byte == 0; });
}

// Builds an envelope as an Outbox does: the body first, sender and recipient after it.
void fill(FrameBuilder& builder, std::size_t payload_bytes, std::size_t later_payload_bytes) {
  auto envelope = builder.initRoot<msg::Envelope>();
  const std::vector<kj::byte> payload(payload_bytes, 7);
  auto weights = runtime::init_payload<msg::PolicyWeights>(envelope);
  weights.setVersion(3);
  weights.setParameters(kj::arrayPtr(payload.data(), payload.size()));
  envelope.setSender(std::string(later_payload_bytes, 's'));
  envelope.setRecipient("sink");
}

DRK_TEST_CASE("a FrameBuilder's frame holds the bytes encode() gives, in one, two and three segments") {
  auto first_segment = zeroed_segment();
  const auto pool = std::make_shared<FrameBufferPool>();
  struct Shape {
    std::size_t payload;
    std::size_t later;  // bytes written after the payload: past the slack, a third segment
    std::size_t segments;
  };
  for (const Shape shape : {Shape{64, 8, 1}, Shape{64 << 10, 8, 2},
                            Shape{64 << 10, (FrameBuilder::kSlackWords + 64) * sizeof(capnp::word), 3}}) {
    DRK_INFO("payload ", shape.payload, ", later ", shape.later);
    {
      FrameBuilder builder(first_segment, *pool);
      fill(builder, shape.payload, shape.later);
      DRK_REQUIRE(builder.getSegmentsForOutput().size() == shape.segments);
      const auto expected = encode(builder);
      const zmq::message_t frame = builder.take_frame();
      DRK_REQUIRE(frame.size() == expected.asBytes().size());
      DRK_CHECK(std::memcmp(frame.data(), expected.asBytes().begin(), frame.size()) == 0);
      DRK_CHECK(reinterpret_cast<std::uintptr_t>(frame.data()) % alignof(capnp::word) == 0);

      const std::span<const std::byte> bytes(static_cast<const std::byte*>(frame.data()), frame.size());
      auto decoded = decode_checked<msg::Envelope>(bytes, nullptr);
      DRK_REQUIRE(decoded.ok());
      const auto weights = runtime::payload_of<msg::PolicyWeights>(decoded->root<msg::Envelope>()).value();
      DRK_CHECK(weights.getParameters().size() == shape.payload);
      DRK_CHECK(std::string(decoded->root<msg::Envelope>().getRecipient().cStr()) == "sink");
    }
    // The builder zeroed what it used of the first segment: the next one may build in it.
    DRK_CHECK(all_zero(first_segment));
  }
}

DRK_TEST_CASE("a FrameBuilder whose frame is never taken frees its segments and zeroes the first") {
  auto first_segment = zeroed_segment();
  const auto pool = std::make_shared<FrameBufferPool>();
  {
    FrameBuilder builder(first_segment, *pool);
    fill(builder, 64 << 10, 8);
    DRK_CHECK(builder.getSegmentsForOutput().size() == 2);
  }
  DRK_CHECK(all_zero(first_segment));
}

DRK_TEST_CASE("a frame taken from a FrameBuilder outlives the builder") {
  auto first_segment = zeroed_segment();
  const auto pool = std::make_shared<FrameBufferPool>();
  zmq::message_t frame;
  std::vector<kj::byte> expected;
  {
    FrameBuilder builder(first_segment, *pool);
    fill(builder, 64 << 10, 8);
    const auto words = encode(builder);
    expected.assign(words.asBytes().begin(), words.asBytes().end());
    frame = builder.take_frame();
  }
  DRK_REQUIRE(frame.size() == expected.size());
  DRK_CHECK(std::memcmp(frame.data(), expected.data(), expected.size()) == 0);
}

DRK_TEST_CASE("a FrameBuilder's second segment is zeroed although its pool buffer held old bytes") {
  const auto pool = std::make_shared<FrameBufferPool>();
  const FrameBufferPool::Buffer used = pool->take(FrameBufferPool::kMinBufferBytes);
  std::memset(used.data, 0xff, used.capacity);
  FrameBufferPool::give_back(used.data);

  auto first_segment = zeroed_segment();
  FrameBuilder builder(first_segment, *pool);
  DRK_REQUIRE(builder.allocateSegment(1).begin() == first_segment.begin());
  const auto second = builder.allocateSegment(1000);
  DRK_REQUIRE(second.size() >= 1000);
  DRK_CHECK(all_zero(second));
}

// An Outbox's envelope with PolicyWeights whose parameters are adopted from borrowed_data().
void fill_borrowed(FrameBuilder& builder, kj::ArrayPtr<const kj::byte> payload) {
  auto envelope = builder.initRoot<msg::Envelope>();
  auto weights = runtime::init_payload<msg::PolicyWeights>(envelope);
  weights.setVersion(3);
  weights.adoptParameters(borrowed_data(weights, payload));
  envelope.setSender("source");
  envelope.setRecipient("sink");
}

// The frame as encode() gives it, and the parameters a receiver reads back from it.
void check_frame_carries(FrameBuilder& builder, kj::ArrayPtr<const kj::byte> payload) {
  const auto expected = encode(builder);
  const zmq::message_t frame = builder.take_frame();
  DRK_REQUIRE(frame.size() == expected.asBytes().size());
  DRK_CHECK(std::memcmp(frame.data(), expected.asBytes().begin(), frame.size()) == 0);
  DRK_CHECK(reinterpret_cast<std::uintptr_t>(frame.data()) % alignof(capnp::word) == 0);
  auto decoded = decode_checked<msg::Envelope>(
      std::span<const std::byte>(static_cast<const std::byte*>(frame.data()), frame.size()), nullptr);
  DRK_REQUIRE(decoded.ok());
  const auto parameters = runtime::payload_of<msg::PolicyWeights>(decoded->root<msg::Envelope>()).value().getParameters();
  DRK_REQUIRE(parameters.size() == payload.size());
  DRK_CHECK(std::memcmp(parameters.begin(), payload.begin(), payload.size()) == 0);
}

DRK_TEST_CASE("a borrowed payload is a segment of the caller's bytes, copied once, into the frame") {
  auto first_segment = zeroed_segment();
  const auto pool = std::make_shared<FrameBufferPool>();
  std::vector<capnp::word> storage(8 << 10);  // 64 KiB, word-aligned
  const auto payload = kj::arrayPtr(reinterpret_cast<const kj::byte*>(storage.data()), storage.size() * 8);
  std::memset(storage.data(), 0x5a, payload.size());
  DRK_REQUIRE(borrowable(payload));
  {
    FrameBuilder builder(first_segment, *pool);
    fill_borrowed(builder, payload);
    const auto segments = builder.getSegmentsForOutput();
    DRK_REQUIRE(segments.size() == 2);
    DRK_CHECK(segments[1].asBytes().begin() == payload.begin());  // not copied into the builder
    check_frame_carries(builder, payload);
  }
  DRK_CHECK(all_zero(first_segment));
}

std::span<const std::byte> bytes_of(const zmq::message_t& part) {
  return {static_cast<const std::byte*>(part.data()), part.size()};
}

DRK_TEST_CASE("a borrowed payload leaves in two parts; a reply that borrows the received part shares it") {
  auto first_segment = zeroed_segment();
  const auto pool = std::make_shared<FrameBufferPool>();
  std::vector<capnp::word> storage(8 << 10);  // 64 KiB, word-aligned
  const auto payload = kj::arrayPtr(reinterpret_cast<const kj::byte*>(storage.data()), storage.size() * 8);
  for (std::size_t i = 0; i < payload.size(); ++i) reinterpret_cast<kj::byte*>(storage.data())[i] = static_cast<kj::byte>(i * 7);
  zmq::message_t head, tail;
  {
    FrameBuilder builder(first_segment, *pool);
    fill_borrowed(builder, payload);
    DRK_REQUIRE(builder.has_borrowed_tail());
    builder.take_parts(head, tail, nullptr);
  }
  DRK_CHECK(all_zero(first_segment));
  DRK_CHECK(tail.data() != static_cast<const void*>(payload.begin()));  // copied once, into the tail
  auto decoded = decode_checked_parts<msg::Envelope>(bytes_of(head), bytes_of(tail));
  DRK_REQUIRE_MESSAGE(decoded.ok(), decoded.error().message);
  const auto parameters = runtime::payload_of<msg::PolicyWeights>(decoded->root<msg::Envelope>()).value().getParameters();
  DRK_REQUIRE(parameters.size() == payload.size());
  DRK_CHECK(std::memcmp(parameters.begin(), payload.begin(), payload.size()) == 0);
  DRK_CHECK(static_cast<const void*>(parameters.begin()) == tail.data());  // read in place

  zmq::message_t reply_head, reply_tail;
  {
    FrameBuilder reply(first_segment, *pool);
    fill_borrowed(reply, parameters);
    DRK_REQUIRE(reply.has_borrowed_tail());
    reply.take_parts(reply_head, reply_tail, &tail);
  }
  DRK_CHECK(reply_tail.data() == tail.data());  // shared: ZeroMQ counts the references
  auto answered = decode_own_parts(bytes_of(reply_head), bytes_of(reply_tail));
  DRK_REQUIRE(answered.ok());
  const auto echoed = runtime::payload_of<msg::PolicyWeights>(answered->root<msg::Envelope>()).value().getParameters();
  DRK_CHECK(std::memcmp(echoed.begin(), payload.begin(), payload.size()) == 0);

  // The copied tail was a pool buffer: freed by its last holder, it is the pool's next one.
  const void* const copied_tail = tail.data();
  tail.rebuild();
  reply_tail.rebuild();
  const FrameBufferPool::Buffer again = pool->take(payload.size());
  DRK_CHECK(static_cast<const void*>(again.data) == copied_tail);
  FrameBufferPool::give_back(again.data);

  // A message of the builder's own segments, small or large, is one frame as before.
  FrameBuilder own(first_segment, *pool);
  const std::vector<kj::byte> copied(64 << 10, kj::byte{9});
  auto weights = runtime::init_payload<msg::PolicyWeights>(own.initRoot<msg::Envelope>());
  weights.setParameters(kj::arrayPtr(copied.data(), copied.size()));
  DRK_CHECK_FALSE(own.has_borrowed_tail());
}

DRK_TEST_CASE("bytes that cannot be borrowed are copied into the builder, and arrive the same") {
  auto first_segment = zeroed_segment();
  const auto pool = std::make_shared<FrameBufferPool>();
  std::vector<capnp::word> storage((64 << 10) / 8 + 2);
  std::memset(storage.data(), 0x33, storage.size() * 8);
  const auto* const start = reinterpret_cast<const kj::byte*>(storage.data());
  struct Case {
    const char* why;
    kj::ArrayPtr<const kj::byte> bytes;
  };
  for (const Case& shape : {Case{"unaligned", kj::arrayPtr(start + 1, 64 << 10)},
                            Case{"not a whole number of words", kj::arrayPtr(start, (64 << 10) + 3)},
                            Case{"small", kj::arrayPtr(start, 64)}}) {
    DRK_INFO(shape.why);
    DRK_CHECK(!borrowable(shape.bytes));
    FrameBuilder builder(first_segment, *pool);
    fill_borrowed(builder, shape.bytes);
    for (const auto segment : builder.getSegmentsForOutput()) {
      const bool holds_callers_bytes = segment.asBytes().begin() <= shape.bytes.begin() &&
                                       shape.bytes.begin() < segment.asBytes().end();
      DRK_CHECK_FALSE(holds_callers_bytes);
    }
    check_frame_carries(builder, shape.bytes);
  }
}

DRK_TEST_CASE("a FrameBufferPool reuses what comes back and keeps a bounded amount") {
  const auto pool = std::make_shared<FrameBufferPool>();
  const FrameBufferPool::Buffer first = pool->take(100);
  DRK_CHECK(first.capacity == FrameBufferPool::kMinBufferBytes);
  DRK_CHECK(reinterpret_cast<std::uintptr_t>(first.data) % 16 == 0);
  FrameBufferPool::give_back(first.data);
  DRK_CHECK(pool->take(200).data == first.data);  // the kept one, large enough
  FrameBufferPool::give_back(first.data);
  const FrameBufferPool::Buffer larger = pool->take(FrameBufferPool::kMinBufferBytes + 1);
  DRK_CHECK(larger.data != first.data);
  DRK_CHECK(larger.capacity == 2 * FrameBufferPool::kMinBufferBytes);
  FrameBufferPool::give_back(larger.data);

  // More than the pool keeps comes back: the rest is freed (ASan/LSan would see a leak).
  std::vector<std::byte*> many;
  for (std::size_t i = 0; i < FrameBufferPool::kKeptBuffers + 8; ++i) many.push_back(pool->take(1).data);
  for (std::byte* data : many) FrameBufferPool::give_back(data);
}

}  // namespace
}  // namespace drk::runtime
