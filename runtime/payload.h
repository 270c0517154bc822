// Typed access to an envelope's payload (messages/envelope.capnp's `payload`): an application's
// message, a struct whose Cap'n Proto type id travels in the Envelope (`payloadType`).
//
//   context.send(oracle, [&](msg::Envelope::Builder out) { fill(init_payload<msg::Candidate>(out)); });
//   if (const auto candidate = payload_of<msg::Candidate>(envelope)) on_candidate(*candidate);
//
// The payload is built in the envelope's own message, as any other field: no copy beyond what
// the builders make (set_payload copies `content` in, as a generated setter does), and a Data
// field of it may borrow its bytes (runtime/transport/borrowed_data.h).
//
// Reading a payload costs what reading a member of the Envelope's union costs: the type id is a
// field of the Envelope's data section and the payload is the union's pointer.
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
  return envelope.getBody().isPayload() ? envelope.getPayloadType() : 0;
}

// The payload as a T; empty when the envelope carries something else.
template <typename T>
std::optional<typename T::Reader> payload_of(msg::Envelope::Reader envelope) {
  if (payload_type(envelope) != payload_type_id<T>()) return std::nullopt;
  return envelope.getBody().getPayload().getAs<T>();
}

// The envelope's body made a payload of type T, to be set. A new envelope's body is a payload
// already (the union's first member): initPayload() would clear a null pointer, which costs
// more than the rest of making a small payload, and initAs/setAs replace what it holds anyway.
template <typename T>
capnp::AnyPointer::Builder payload_slot(msg::Envelope::Builder envelope) {
  envelope.setPayloadType(payload_type_id<T>());
  auto body = envelope.getBody();
  return body.isPayload() ? body.getPayload() : body.initPayload();
}

// Makes the envelope's body a payload of type T and returns it to fill.
template <typename T>
typename T::Builder init_payload(msg::Envelope::Builder envelope) {
  return payload_slot<T>(envelope).template initAs<T>();
}

// Makes the envelope's body a payload of type T holding a copy of `content`.
template <typename T>
void set_payload(msg::Envelope::Builder envelope, typename T::Reader content) {
  payload_slot<T>(envelope).template setAs<T>(content);
}

}  // namespace drk::runtime
