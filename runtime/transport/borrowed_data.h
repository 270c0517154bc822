// borrowed_data(): a large Data field set without copying it into the message builder.
//
// `weights.setParameters(bytes)` zeroes room for the bytes in a segment and then copies them
// there, and the Outbox's frame is built around that segment: two passes over a 64 KiB payload
// where raw ZeroMQ makes one. `weights.adoptParameters(borrowed_data(weights, bytes))` instead
// makes the caller's bytes a segment of the message (Cap'n Proto's referenceExternalData), and
// the Outbox sends them as a second ZeroMQ part: copied once, or, when they are the payload of
// the envelope its actor is handling, shared without a copy (outbox.h, codec.h).
//
// Contract:
// - The bytes must stay alive and unchanged until the builder is destroyed. Inside an Outbox's
//   `fill` that is until send() returns; a Data::Reader of the envelope being handled, a member
//   buffer or a local that outlives send() all qualify.
// - Only word-aligned bytes whose size is a multiple of a word are borrowed: Cap'n Proto would
//   otherwise write out the bytes up to the next word boundary, which are not the caller's to
//   send. Others are copied into the builder as setParameters() does, so any bytes work.
// - The field is read-only afterwards: asking the builder for a Data::Builder of it throws.
//
// Thread-safety: as the builder's. Errors: none beyond the builder's (allocation faults throw).
#pragma once

#include <capnp/orphan.h>
#include <kj/common.h>

#include <cstdint>

namespace drk::runtime {

// Below this a copy costs less than the segment and the far pointer a borrow adds.
inline constexpr std::size_t kMinBorrowedBytes = 4096;

// True when `bytes` would be borrowed rather than copied.
inline bool borrowable(kj::ArrayPtr<const kj::byte> bytes) {
  return bytes.size() >= kMinBorrowedBytes && bytes.size() % sizeof(capnp::word) == 0 &&
         reinterpret_cast<std::uintptr_t>(bytes.begin()) % alignof(capnp::word) == 0;
}

// The bytes as an orphan of the message that holds `builder` (any struct builder in it), to
// adopt into a Data field of that message: `x.adoptField(borrowed_data(x, bytes))`.
template <typename StructBuilder>
capnp::Orphan<capnp::Data> borrowed_data(StructBuilder builder, kj::ArrayPtr<const kj::byte> bytes) {
  const capnp::Orphanage orphanage = capnp::Orphanage::getForMessageContaining(builder);
  if (borrowable(bytes)) return orphanage.referenceExternalData(bytes);
  return orphanage.newOrphanCopy(capnp::Data::Reader(bytes));
}

}  // namespace drk::runtime
