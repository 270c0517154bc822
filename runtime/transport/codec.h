// Codec: Cap'n Proto messages to bytes and back, with the limits that bytes from a peer need.
//
// encode() flattens a message into one contiguous array (the wire form of a ZeroMQ frame);
// encode_into() writes the same bytes into a buffer the caller sized with encoded_size_bytes(),
// so that a sender can build the frame in place with a single copy.
// decode() reads bytes that came from another process, which are untrusted: it rejects frames
// over DecodeLimits::max_frame_bytes, frames whose length is not a whole number of words, and
// frames whose segment table or pointers are malformed, all with Errc::protocol_error, and reads
// with a traversal limit and a nesting limit so that a hostile message cannot make a reader
// loop or recurse without bound. The whole message is traversed once at decode time, which
// checks its structure but not its schema: check_schema() then follows every pointer the schema
// names, so that a message that fits no schema (a Text without its NUL, a pointer of the wrong
// kind, a list of the wrong element size) is refused before a handler reads it and throws.
//
// decode_checked() is what every reader of a peer's bytes calls: the checks of decode() and
// check_schema() in one walk. check_schema() makes every read that T's generated readers can
// make, each with Cap'n Proto's bounds, kind, traversal and nesting checks, so that decode()'s
// separate structural traversal adds nothing a reader of T relies on, and decode_checked()
// leaves it out, unless T has pointers that check_schema() cannot follow (AnyPointer,
// capabilities: SchemaCheck::follows_every_pointer()), which a handler reads as it chooses.
//
// Typed pointers: an AnyPointer whose type its struct names (messages/envelope.capnp's Envelope:
// `payloadType :UInt64` names the type of `body.payload :AnyPointer`). A SchemaCheck given
// TypedPointers follows the pointer as the struct whose Cap'n Proto id the UInt64 holds, in the
// same walk, and refuses a message whose id names none of the given types, so that an
// application's payload is checked as its own type would be and a payload of a type the program
// does not know is never handed to a handler.
//
// The guarantee: a message that passes decode_checked<T>() (or decode() and check_schema()
// against T) can be read in full through T's generated readers (every field, the active member
// of every union, every list element) several times over without a kj::Exception.
// check_schema() makes the same pointer reads the generated readers make (Cap'n Proto's own
// kind, element size and NUL checks), guided by a SchemaCheck compiled once per root type from
// the schema, so that it costs a walk over the pointers and no reflection per message.
// tests/fuzz/decode_fuzz.cpp holds the guarantee against arbitrary bytes, through
// decode_checked<Envelope>().
//
// Two parts: an envelope whose large Data is borrowed (borrowed_data.h) travels as two ZeroMQ
// parts, so that a reply can share a payload it received instead of copying it (outbox.h): the
// head holds a segment table naming exactly two segments and the first segment, the tail the
// second segment's words. decode_own_parts() and decode_checked_parts() read them with the same
// limits and checks (the size limit counts both parts).
//
// Alignment: a ZeroMQ frame is not guaranteed to be 8-byte aligned (docs/pitfalls.md #6). When the
// caller hands over ownership of aligned bytes they are read in place; otherwise they are copied
// once into an aligned buffer. Of two parts, a misaligned head alone is copied (it is small; the
// tail is still read in place); a misaligned tail is copied with the head.
//
// Thread-safety: free functions are reentrant; a DecodedMessage is a value owned by one thread;
// a SchemaCheck is immutable once built and may be shared by threads.
#pragma once

#include <capnp/message.h>
#include <capnp/schema.h>
#include <capnp/serialize.h>
#include <kj/array.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/frame_limit.h"
#include "base/result.h"

namespace drk::runtime {

struct DecodeLimits {
  std::size_t max_frame_bytes = kMaxFrameBytes;
  // Words a reader may traverse, as a multiple of the frame's own size (each word read 8 times).
  uint64_t traversal_factor = 8;
  int nesting_limit = 64;
};

// The flat wire form of `message` (segment table followed by the segments).
kj::Array<capnp::word> encode(capnp::MessageBuilder& message);
// The size of encode(message) in bytes.
std::size_t encoded_size_bytes(capnp::MessageBuilder& message);
// Writes encode(message) into `out`, which holds exactly encoded_size_bytes(message) bytes.
void encode_into(capnp::MessageBuilder& message, std::span<std::byte> out);

class DecodedMessage;

// The typed pointers of a root type (above): the AnyPointer field `content` holds a struct of one
// of `types`, the one whose schema id the UInt64 field `type_id` holds. `type_id` is a field of
// the struct that holds `content`, or of the struct whose group (a union, say) holds it: one
// data section.
struct TypedPointers {
  capnp::StructSchema::Field type_id;
  capnp::StructSchema::Field content;
  std::vector<capnp::StructSchema> types;
};

// What check_schema() verifies for one root struct type, compiled from its schema: for every
// struct and group, the pointer fields and the kind each must hold, and where its union's
// discriminant lies; with `typed`, the types its typed pointers may hold. Built once per root
// type (decode_checked keeps one per T; payload_types.h one per set of payload types).
class SchemaCheck {
 public:
  explicit SchemaCheck(capnp::StructSchema root, const std::optional<TypedPointers>& typed = std::nullopt);
  ~SchemaCheck();
  SchemaCheck(const SchemaCheck&) = delete;
  SchemaCheck& operator=(const SchemaCheck&) = delete;

  struct Plan;  // codec.cpp

  // False when the type has AnyPointer or capability fields anywhere: pointers whose targets
  // check_schema() leaves to the handler.
  bool follows_every_pointer() const;

 private:
  friend Status check_schema(DecodedMessage& message, const SchemaCheck& check);
  std::unique_ptr<const Plan> plan_;
  std::string root_name_;
};

// A decoded message that owns (or keeps alive) the bytes it reads from.
class DecodedMessage {
 public:
  template <typename T>
  typename T::Reader root() {
    return reader_->getRoot<T>();
  }

  std::size_t size_bytes() const { return size_bytes_; }

 private:
  friend Status check_schema(DecodedMessage& message, const SchemaCheck& check);
  friend Result<DecodedMessage> decode(std::span<const std::byte>, std::shared_ptr<const void>,
                                       const DecodeLimits&);
  friend Result<DecodedMessage> decode_own(std::span<const std::byte>, std::shared_ptr<const void>,
                                           const DecodeLimits&);
  friend Result<DecodedMessage> decode_checked(std::span<const std::byte>, std::shared_ptr<const void>,
                                               const DecodeLimits&, const SchemaCheck&);
  friend Result<DecodedMessage> decode_own_parts(std::span<const std::byte>, std::span<const std::byte>,
                                                 const DecodeLimits&);
  friend Result<DecodedMessage> decode_checked_parts(std::span<const std::byte>, std::span<const std::byte>,
                                                     const DecodeLimits&, const SchemaCheck&);
  // decode() and decode_own(): `traverse` says whether every pointer is followed once here.
  static Result<DecodedMessage> read(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                                     const DecodeLimits& limits, bool traverse);
  static Result<DecodedMessage> read_parts(std::span<const std::byte> head, std::span<const std::byte> tail,
                                           const DecodeLimits& limits, bool traverse);
  // Sets options_ from `limits` for size_bytes_ and opens reader_ on the words or segments set;
  // with `traverse`, follows every pointer once. Errors: protocol_error for a malformed message.
  Status open_reader(const DecodeLimits& limits, bool traverse);
  // A reader of the same words with `options` (check_schema reads with a reader of its own).
  std::unique_ptr<capnp::MessageReader> reader_with(const capnp::ReaderOptions& options) const;
  std::shared_ptr<const void> owner_;
  kj::Array<capnp::word> aligned_copy_;  // one part: the message; two parts: the first segment
  kj::ArrayPtr<const capnp::word> words_;  // one part: owner_'s bytes or aligned_copy_
  // Two parts, read in place: the segments (on the heap: reader_ keeps a pointer to them).
  kj::Array<kj::ArrayPtr<const capnp::word>> segments_;
  capnp::ReaderOptions options_;
  std::unique_ptr<capnp::MessageReader> reader_;
  std::size_t size_bytes_ = 0;
};

// Decodes `bytes`. When `owner` is given it keeps `bytes` alive and aligned bytes are read in
// place; without it the bytes are always copied. A caller that keeps the bytes alive and
// unchanged for as long as the DecodedMessage lives may pass an owner that owns nothing
// (std::shared_ptr<const void>(std::shared_ptr<void>(), bytes.data()): no allocation).
// Errors: protocol_error naming what is wrong.
Result<DecodedMessage> decode(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                              const DecodeLimits& limits = {});

// Decodes bytes that this process's own Outboxes encoded from Cap'n Proto builders: those that
// arrive on an actor's in-process mailbox (inproc://, which nothing outside the process can
// reach; transport.h). A builder only writes well-formed messages of its type, so the
// traversal and the schema check are skipped; the size limit and the reader's traversal and
// nesting limits still hold, so that a bug of our own that sent bad bytes makes the handler
// throw (a fault), never loop. Never for bytes from another process: decode_checked.
// Errors: protocol_error as decode() for the size and word checks and the segment table.
Result<DecodedMessage> decode_own(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                                  const DecodeLimits& limits = {});

// An envelope of two parts (above), from this process's own Outboxes (as decode_own) or from a
// peer (as decode_checked). The caller keeps both parts alive and unchanged while the
// DecodedMessage lives; a head that is not word-aligned is copied alone, a tail that is not is
// copied with the head into one aligned message.
// Errors: protocol_error when the sizes pass the limit, the head's table does not name exactly
// two segments, or a part's size is not what the table says.
Result<DecodedMessage> decode_own_parts(std::span<const std::byte> head, std::span<const std::byte> tail,
                                        const DecodeLimits& limits = {});
Result<DecodedMessage> decode_checked_parts(std::span<const std::byte> head, std::span<const std::byte> tail,
                                            const DecodeLimits& limits, const SchemaCheck& check);

// The length in bytes of the first message in `bytes`, from its segment table: a batching
// sender (runtime/transport/outbox.h) puts several messages back to back in one frame.
// Errors: protocol_error when the table is cut short, names more than 512 segments, or its
// segments run past the end of `bytes`.
Result<std::size_t> first_message_bytes(std::span<const std::byte> bytes);

// Reads every pointer of the root that `check` says the root type has: every pointer field of
// every struct, of the active member of every union, every list element, every Text and Data.
// Errors: protocol_error naming what does not fit. It reads with a reader of its own, limited to
// a quarter of the message's traversal limit, so that a message that passes can be read in full
// several more times by its handler.
Status check_schema(DecodedMessage& message, const SchemaCheck& check);
// The same against `schema`, compiled on every call: for tests and tools, not per message.
Status check_schema(DecodedMessage& message, capnp::StructSchema schema);

// Decodes `bytes` as decode() does and checks them against `check` (see above for the one walk
// this takes). Errors: protocol_error, as decode() and check_schema().
Result<DecodedMessage> decode_checked(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                                      const DecodeLimits& limits, const SchemaCheck& check);

// decode_checked() against the root type T: what every reader of bytes from a peer calls.
template <typename T>
Result<DecodedMessage> decode_checked(std::span<const std::byte> bytes, std::shared_ptr<const void> owner,
                                      const DecodeLimits& limits = {}) {
  static const SchemaCheck check(capnp::Schema::from<T>());
  return decode_checked(bytes, std::move(owner), limits, check);
}

// decode_checked_parts() against the root type T.
template <typename T>
Result<DecodedMessage> decode_checked_parts(std::span<const std::byte> head, std::span<const std::byte> tail,
                                            const DecodeLimits& limits = {}) {
  static const SchemaCheck check(capnp::Schema::from<T>());
  return decode_checked_parts(head, tail, limits, check);
}

}  // namespace drk::runtime
