// Typed access to an envelope's payload (messages/envelope.capnp's Payload): an application's
// message, a struct whose Cap'n Proto type id travels beside it.
//
//   context.send(oracle, [&](msg::Envelope::Builder out) { fill(init_payload<msg::Candidate>(out)); });
//   if (const auto candidate = payload_of<msg::Candidate>(envelope)) on_candidate(*candidate);
//
// The payload is built in the envelope's own message, as any other field: no copy beyond what
// the builders make (set_payload copies `content` in, as a generated setter does), and a Data
// field of it may borrow its bytes (runtime/transport/borrowed_data.h).
//
// Thread-safety: as the readers and builders. Errors: none; payload_of() is empty for an
// envelope that carries something else.
#pragma once

#include <capnp/any.h>

#include <cstdint>
#include <optional>

#include "messages/envelope.capnp.h"

namespace drk::runtime {

// The type id of T, for a switch over payload_type().
template <typename T>
constexpr uint64_t payload_type_id() {
  return capnp::typeId<T>();
}

// The type id of the envelope's payload; 0 when its body is not a payload.
inline uint64_t payload_type(msg::Envelope::Reader envelope) {
  const auto body = envelope.getBody();
  return body.isPayload() ? body.getPayload().getTypeId() : 0;
}

// The payload as a T; empty when the envelope carries something else.
template <typename T>
std::optional<typename T::Reader> payload_of(msg::Envelope::Reader envelope) {
  // One read of each pointer: this runs for every message a handler tests.
  const auto body = envelope.getBody();
  if (!body.isPayload()) return std::nullopt;
  const auto payload = body.getPayload();
  if (payload.getTypeId() != payload_type_id<T>()) return std::nullopt;
  return payload.getContent().getAs<T>();
}

// Makes the envelope's body a payload of type T and returns it to fill.
template <typename T>
typename T::Builder init_payload(msg::Envelope::Builder envelope) {
  auto payload = envelope.getBody().initPayload();
  payload.setTypeId(payload_type_id<T>());
  return payload.getContent().initAs<T>();
}

// Makes the envelope's body a payload of type T holding a copy of `content`.
template <typename T>
void set_payload(msg::Envelope::Builder envelope, typename T::Reader content) {
  auto payload = envelope.getBody().initPayload();
  payload.setTypeId(payload_type_id<T>());
  payload.getContent().setAs<T>(content);
}

}  // namespace drk::runtime
