// Codec: Cap'n Proto messages to bytes and back, with the limits that bytes from a peer need.
//
// encode() flattens a message into one contiguous array (the wire form of a ZeroMQ frame).
// decode() reads bytes that came from another process, which are untrusted: it rejects frames
// over DecodeLimits::max_frame_bytes, frames whose length is not a whole number of words, and
// frames whose segment table or pointers are malformed, all with Errc::protocol_error, and reads
// with a traversal limit and a nesting limit so that a hostile message cannot make a reader
// loop or recurse without bound. The whole message is traversed once at decode time, which
// checks its structure but not its schema: check_schema() then reads every field as the schema
// says, so that a message that fits no schema (a Text without its NUL, a pointer of the wrong
// kind, a list of the wrong element size) is refused before a handler reads it and throws.
//
// Alignment: a ZeroMQ frame is not guaranteed to be 8-byte aligned (pitfalls.md #6). When the
// caller hands over ownership of aligned bytes they are read in place; otherwise they are copied
// once into an aligned buffer.
//
// Thread-safety: free functions are reentrant; a DecodedMessage is a value owned by one thread.
#pragma once

#include <capnp/message.h>
#include <capnp/schema.h>
#include <capnp/serialize.h>
#include <kj/array.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

#include "runtime/result.h"

namespace drk::runtime {

struct DecodeLimits {
  std::size_t max_frame_bytes = 64u << 20;
  // Words a reader may traverse, as a multiple of the frame's own size (each word read 8 times).
  uint64_t traversal_factor = 8;
  int nesting_limit = 64;
};

// The flat wire form of `message` (segment table followed by the segments).
kj::Array<capnp::word> encode(capnp::MessageBuilder& message);

// A decoded message that owns (or keeps alive) the bytes it reads from.
class DecodedMessage {
 public:
  template <typename T>
  typename T::Reader root() {
    return reader_->getRoot<T>();
  }

  std::size_t size_bytes() const { return size_bytes_; }

 private:
  friend Status check_schema(DecodedMessage& message, capnp::StructSchema schema);
  friend Result<DecodedMessage> decode(std::span<const std::byte>, std::shared_ptr<const void>,
                                       const DecodeLimits&);
  std::shared_ptr<const void> owner_;
  kj::Array<capnp::word> aligned_copy_;
  kj::ArrayPtr<const capnp::word> words_;  // what reader_ reads: owner_'s bytes or aligned_copy_
  capnp::ReaderOptions options_;
  std::unique_ptr<capnp::FlatArrayMessageReader> reader_;
  std::size_t size_bytes_ = 0;
};

// Decodes `bytes`. When `owner` is given it keeps `bytes` alive and aligned bytes are read in
// place; without it the bytes are always copied. Errors: protocol_error naming what is wrong.
Result<DecodedMessage> decode(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                              const DecodeLimits& limits = {});

// Reads every field of the root as `schema` (the root's type) says: every set union member,
// every list element, every Text and Data. Errors: protocol_error naming what does not fit.
// It reads with a reader of its own, limited to a quarter of the message's traversal limit, so
// that a message that passes can be read in full several more times by its handler.
Status check_schema(DecodedMessage& message, capnp::StructSchema schema);

// decode() and then check_schema() against the root type T: what every reader of bytes from a
// peer calls.
template <typename T>
Result<DecodedMessage> decode_checked(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                                      const DecodeLimits& limits = {}) {
  auto decoded = decode(bytes, std::move(owner), limits);
  if (!decoded) return decoded;
  if (auto checked = check_schema(*decoded, capnp::Schema::from<T>()); !checked) return checked.error();
  return decoded;
}

}  // namespace drk::runtime
