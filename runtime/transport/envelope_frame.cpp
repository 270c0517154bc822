#include "runtime/transport/envelope_frame.h"

#include <capnp/message.h>

#include <memory>
#include <span>

#include "runtime/transport/transport.h"
#include "runtime/transport/payload_types.h"

namespace drk::runtime {

zmq::message_t envelope_frame(const std::function<void(msg::Envelope::Builder)>& fill) {
  capnp::MallocMessageBuilder builder;
  auto envelope = builder.initRoot<msg::Envelope>();
  fill(envelope);
  envelope.setSentUnixMs(system_unix_ms());
  const kj::Array<capnp::word> words = encode(builder);
  const auto bytes = words.asBytes();
  return zmq::message_t(bytes.begin(), bytes.size());
}

Result<DecodedMessage> decode_envelope_frame(zmq::message_t&& frame, std::size_t max_bytes) {
  DecodeLimits limits;
  limits.max_frame_bytes = max_bytes;
  auto owner = std::make_shared<zmq::message_t>(std::move(frame));
  const std::span<const std::byte> bytes(static_cast<const std::byte*>(owner->data()), owner->size());
  return decode_checked(bytes, owner, limits, envelope_check());
}

}  // namespace drk::runtime
